//! `select!`: parsing and expansion.
//!
//! ```text
//! select! { <pattern> = <async expression>, if <precondition> => <handler>, ... else => <expression> }
//! ```
//!
//! becomes a block that declares an output enum (one variant per branch, generic over what
//! the branch's pattern binds, and `Disabled`) and matches on the value of an inner block:
//!
//! 1. the inner block evaluates every precondition in order, then the async expression of
//!    each branch in order (a disabled branch's too, as Tokio does), turned into a future
//!    and pinned on the stack in an `Option` (`None` for a disabled branch, its future
//!    dropped unpolled, and for a branch disabled later);
//! 2. one `poll_fn` polls the branches still enabled, from a start branch that the model
//!    checker chooses (`__private::start_branch`) or the first one (`biased;`), round in
//!    written order; the first output that matches its branch's pattern ends it with the
//!    branch's variant, holding the values the pattern bound; an output that does not
//!    match disables its branch; no branch left gives `Disabled`;
//! 3. the inner block ends, dropping every future, and only then does the outer `match`
//!    run the branch's handler (or `else`) in the caller's own async context, where `break`,
//!    `continue`, `return`, `?` and `.await` mean what they mean around the macro.
//!
//! The pattern is tested on the output by value, not by reference (by-reference matching
//! would reject `mut x`, `ref x` and `&x` under edition 2024's binding rules): the test
//! copy of the pattern drops `ref` and `mut`, moves what it binds into a tuple, and the
//! handler's arm matches that tuple with the bindings as the user wrote them. Which names
//! a pattern binds is read from its syntax, as rustc's naming lints do: an identifier
//! that starts with an uppercase letter and has no `ref`, `mut` or `@` is a constant, a
//! unit struct or a unit variant. A lowercase constant still works (the tuple holds its
//! value, and the handler's arm tests it again), so only an uppercase binding is
//! misread, and fails to compile in the handler.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Block, Expr, ExprBlock, Ident, Pat, PatIdent, Token, token};

use crate::join::{errors_block, local, locals, parse_biased, private};

/// The most branches one `select!` takes, as Tokio's.
const MAX_BRANCHES: usize = 64;

/// The expansion of `select! { input }`, or its errors.
pub(crate) fn select(input: TokenStream) -> TokenStream {
    match Select::parse.parse2(input) {
        Ok(select) => expand(&select),
        Err(error) => errors_block(&error),
    }
}

/// A parsed `select!`.
struct Select {
    /// `biased;`: poll in written order, no decision.
    biased: bool,
    /// At least one, at most [`MAX_BRANCHES`].
    branches: Vec<Branch>,
    /// The `else` expression, if any.
    otherwise: Option<Expr>,
}

/// `<pattern> = <future>, if <precondition> => <handler>`.
struct Branch {
    pattern: Pat,
    future: Expr,
    precondition: Option<Expr>,
    handler: Expr,
}

impl Parse for Select {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let biased = parse_biased(input)?;
        let mut branches = Vec::new();
        let mut otherwise: Option<(Token![else], Expr)> = None;
        while !input.is_empty() {
            if input.peek(Token![else]) {
                let keyword: Token![else] = input.parse()?;
                if otherwise.is_some() {
                    return Err(syn::Error::new(
                        keyword.span,
                        "`else` is given twice: a select! has at most one `else` branch",
                    ));
                }
                arrow(input, "after `else`")?;
                otherwise = Some((keyword, parse_handler(input)?));
            } else if let Some((keyword, _)) = &otherwise {
                return Err(syn::Error::new(
                    keyword.span,
                    "the `else` branch must come last, after every other branch",
                ));
            } else {
                branches.push(input.parse::<Branch>()?);
            }
        }
        check_count(
            &branches,
            otherwise.as_ref().map(|(keyword, _)| keyword.span),
        )?;
        Ok(Select {
            biased,
            branches,
            otherwise: otherwise.map(|(_, expr)| expr),
        })
    }
}

/// At least one branch, and at most [`MAX_BRANCHES`]. `else_span`: where `else` is, if
/// anywhere, for the error of a `select!` with no branch.
fn check_count(branches: &[Branch], else_span: Option<Span>) -> syn::Result<()> {
    if branches.is_empty() {
        return Err(syn::Error::new(
            else_span.unwrap_or_else(Span::call_site),
            "select! needs at least one branch: `<pattern> = <async expression> => <handler>`",
        ));
    }
    match branches.get(MAX_BRANCHES) {
        Some(first_extra) => Err(syn::Error::new_spanned(
            &first_extra.pattern,
            format!(
                "select! takes at most {MAX_BRANCHES} branches, as Tokio's; this one has {}: \
                 split it, or select over a collection of futures",
                branches.len()
            ),
        )),
        None => Ok(()),
    }
}

impl Parse for Branch {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let pattern = Pat::parse_multi_with_leading_vert(input)?;
        if !input.peek(Token![=]) || input.peek(Token![==]) || input.peek(Token![=>]) {
            return Err(
                input.error("expected `=` after the branch's pattern, then the async expression")
            );
        }
        input.parse::<Token![=]>()?;
        let future: Expr = input.parse()?;
        let precondition = if input.peek(Token![,]) && input.peek2(Token![if]) {
            input.parse::<Token![,]>()?;
            input.parse::<Token![if]>()?;
            Some(input.parse::<Expr>()?)
        } else {
            None
        };
        arrow(
            input,
            "after the async expression (and its `, if <precondition>`, if any)",
        )?;
        let handler = parse_handler(input)?;
        Ok(Branch {
            pattern,
            future,
            precondition,
            handler,
        })
    }
}

/// Consumes `=>`, or says it is missing (`after`: what it should follow).
fn arrow(input: ParseStream<'_>, after: &str) -> syn::Result<()> {
    if !input.peek(Token![=>]) {
        return Err(input.error(format!("expected `=>` {after}, then the handler")));
    }
    input.parse::<Token![=>]>()?;
    Ok(())
}

/// A handler and the comma after it: optional after a block, as in a `match`, required
/// after any other expression unless it is the last.
fn parse_handler(input: ParseStream<'_>) -> syn::Result<Expr> {
    if input.peek(token::Brace) {
        let block: Block = input.parse()?;
        input.parse::<Option<Token![,]>>()?;
        return Ok(Expr::Block(ExprBlock {
            attrs: Vec::new(),
            label: None,
            block,
        }));
    }
    let handler: Expr = input.parse()?;
    if !input.is_empty() {
        if !input.peek(Token![,]) {
            return Err(input.error(
                "expected `,` after the handler (a handler that is not a block ends with a comma)",
            ));
        }
        input.parse::<Token![,]>()?;
    }
    Ok(handler)
}

/// A branch's pattern taken apart: the copy that tests an output by value, and the
/// bindings, in order, each once, as written (`x`, `mut x`, `ref x`, `ref mut x`).
pub(crate) struct Bindings {
    pub(crate) test: Pat,
    pub(crate) names: Vec<PatIdent>,
}

impl Bindings {
    pub(crate) fn of(pattern: &Pat) -> Self {
        let mut bindings = Bindings {
            test: pattern.clone(),
            names: Vec::new(),
        };
        strip(&mut bindings.test, &mut bindings.names);
        bindings
    }
}

/// Takes `ref` and `mut` off the bindings of `pattern`, and adds each binding (as written,
/// without its `@` subpattern) to `found` unless one of the same name is there.
fn strip(pattern: &mut Pat, found: &mut Vec<PatIdent>) {
    let each = |pats: &mut dyn Iterator<Item = &mut Pat>, found: &mut Vec<PatIdent>| {
        pats.for_each(|p| strip(p, found));
    };
    match pattern {
        Pat::Ident(ident) => {
            if binds(ident) {
                if !found.iter().any(|f| f.ident == ident.ident) {
                    found.push(PatIdent {
                        attrs: Vec::new(),
                        subpat: None,
                        ..ident.clone()
                    });
                }
                ident.by_ref = None;
                ident.mutability = None;
            }
            if let Some((_, sub)) = &mut ident.subpat {
                strip(sub, found);
            }
        }
        Pat::Or(or) => each(&mut or.cases.iter_mut(), found),
        Pat::Paren(paren) => strip(&mut paren.pat, found),
        Pat::Reference(reference) => strip(&mut reference.pat, found),
        Pat::Type(typed) => strip(&mut typed.pat, found),
        Pat::Slice(slice) => each(&mut slice.elems.iter_mut(), found),
        Pat::Tuple(tuple) => each(&mut tuple.elems.iter_mut(), found),
        Pat::TupleStruct(tuple) => each(&mut tuple.elems.iter_mut(), found),
        Pat::Struct(fields) => each(&mut fields.fields.iter_mut().map(|f| &mut *f.pat), found),
        // Literals, paths, ranges, `..`, `_`, constants and macros bind nothing we can see.
        _ => {}
    }
}

/// Whether an identifier pattern is a binding rather than a constant, a unit struct or a
/// unit variant: it has `ref`, `mut` or `@`, or does not start with an uppercase letter.
fn binds(ident: &PatIdent) -> bool {
    ident.by_ref.is_some()
        || ident.mutability.is_some()
        || ident.subpat.is_some()
        || !ident
            .ident
            .unraw()
            .to_string()
            .starts_with(char::is_uppercase)
}

/// The names an expansion gives its own items and locals.
struct Names {
    /// The output enum.
    output: Ident,
    /// Its variant for each branch.
    variants: Vec<Ident>,
    /// Each branch's pinned `Option` of its future.
    futures: Vec<Ident>,
}

impl Names {
    fn new(n: usize) -> Self {
        Names {
            output: Ident::new("__SelectOutput", Span::mixed_site()),
            variants: (0..n).map(|i| format_ident!("Branch{i}")).collect(),
            futures: locals("__future", n),
        }
    }
}

/// The whole expansion: the output enum, then the match of the inner block's value.
fn expand(select: &Select) -> TokenStream {
    let p = private();
    let names = Names::new(select.branches.len());
    let bindings: Vec<Bindings> = select
        .branches
        .iter()
        .map(|b| Bindings::of(&b.pattern))
        .collect();
    let Names {
        output, variants, ..
    } = &names;
    let params: Vec<Ident> = (0..variants.len()).map(|i| format_ident!("T{i}")).collect();
    let inner = inner_block(select, &names, &bindings);
    let arms = select.branches.iter().zip(&bindings).zip(variants);
    let arms = arms.map(|((branch, bound), variant)| {
        let forms = &bound.names;
        let handler = &branch.handler;
        quote!(#output::#variant((#(#forms,)*)) => #handler,)
    });
    let otherwise = match &select.otherwise {
        Some(expr) => quote!(#expr),
        None => quote!(#p::all_branches_disabled()),
    };
    quote!({
        enum #output<#(#params),*> {
            #(#variants(#params),)*
            Disabled,
        }
        match { #inner } {
            #(#arms)*
            #output::Disabled => #otherwise,
            #[allow(unreachable_patterns)]
            _ => #p::matched_before(),
        }
    })
}

/// The inner block: preconditions, futures, and the `poll_fn` that polls them.
fn inner_block(select: &Select, names: &Names, bindings: &[Bindings]) -> TokenStream {
    let p = private();
    let enabled = locals("__enabled", select.branches.len());
    let preconditions = select.branches.iter().zip(&enabled).map(|(branch, on)| {
        let condition = match &branch.precondition {
            Some(condition) => quote!(#condition),
            None => quote!(true),
        };
        quote!(let #on: bool = #condition;)
    });
    let futures = select.branches.iter().zip(&enabled).zip(&names.futures);
    let futures = futures.map(|((branch, on), slot)| {
        let future = &branch.future;
        // Evaluated whether or not the branch is enabled, as Tokio does; a disabled
        // branch's future is dropped unpolled.
        quote! {
            let mut #slot = #p::IntoFuture::into_future(#future);
            let mut #slot = #p::pin!(if #on {
                #p::Option::Some(#slot)
            } else {
                ::core::mem::drop(#slot);
                #p::Option::None
            });
        }
    });
    let (cx, value) = (local("__cx"), local("__selected"));
    let body = poll_body(select.biased, names, bindings);
    quote! {
        #(#preconditions)*
        #(#futures)*
        let #value = #p::poll_fn(|#cx: &mut #p::Context<'_>| { #body }).await;
        #value
    }
}

/// The body of the `poll_fn`: one round over the enabled branches from the start branch.
fn poll_body(biased: bool, names: &Names, bindings: &[Bindings]) -> TokenStream {
    let p = private();
    let Names {
        output, futures, ..
    } = names;
    let n = futures.len();
    let (from, step) = (local("__from"), local("__step"));
    let first = match biased {
        true => quote!(0usize),
        false => quote!(#p::start_branch(&[#(#p::Option::is_some(&*#futures)),*])),
    };
    let polls = (0..n).map(|i| poll_arm(i, names, &bindings[i]));
    quote! {
        let #from: usize = #first;
        for #step in 0..#n {
            match #p::round(#from, #step, #n) {
                #(#polls)*
                _ => {}
            }
        }
        if #(#p::Option::is_some(&*#futures))||* {
            #p::Poll::Pending
        } else {
            #p::Poll::Ready(#output::Disabled)
        }
    }
}

/// The arm that polls branch `i`: a ready output that matches the pattern ends the poll
/// with the branch's variant; one that does not disables the branch.
fn poll_arm(i: usize, names: &Names, bindings: &Bindings) -> TokenStream {
    let p = private();
    let (output, variant, slot) = (&names.output, &names.variants[i], &names.futures[i]);
    let (cx, value) = (local("__cx"), local("__value"));
    let test = &bindings.test;
    let bound = bindings.names.iter().map(|b| &b.ident);
    quote! {
        #i => {
            if let #p::Option::Some(#p::Poll::Ready(#value)) = #p::poll_branch(#slot.as_mut(), #cx) {
                #[allow(unused_variables, unreachable_patterns)]
                match #value {
                    #test => return #p::Poll::Ready(#output::#variant((#(#bound,)*))),
                    _ => {}
                }
                #slot.set(#p::Option::None);
            }
        }
    }
}
