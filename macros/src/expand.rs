//! Checks the function the attribute is on and writes the test that replaces it.

use proc_macro2::{Literal, TokenStream};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, Item, ItemFn, ReturnType, Signature, Token, Type};

use crate::args::{Arg, Args, Strategy};
use crate::errors::Errors;

/// The expansion of `#[interleave(attr)] item`: the test, or the errors as `compile_error!`s.
pub(crate) fn interleave(attr: TokenStream, item: TokenStream) -> TokenStream {
    match checked(attr, item) {
        Ok((args, function)) => test_fn(&args, function),
        Err(error) => error.to_compile_error(),
    }
}

/// The arguments and the function, or every error found in either.
fn checked(attr: TokenStream, item: TokenStream) -> syn::Result<(Args, ItemFn)> {
    let mut errors = Errors::default();
    let args = errors
        .check(Punctuated::<Arg, Token![,]>::parse_terminated.parse2(attr))
        .and_then(|list| errors.check(Args::from_list(&list)));
    let function = errors.check(syn::parse2::<Item>(item).and_then(test_function));
    if let (Some(args), Some(function)) = (&args, &function) {
        if let Some((_, tokens)) = args
            .runtime
            .as_ref()
            .filter(|_| function.sig.asyncness.is_none())
        {
            errors.push(syn::Error::new_spanned(
                tokens,
                "`flavor`, `worker_threads` and `start_paused` choose the runtime of an \
                 `async fn`; make the test `async` or remove them",
            ));
        }
    }
    errors.finish()?;
    match (args, function) {
        (Some(args), Some(function)) => Ok((args, function)),
        _ => unreachable!("an argument or function error was recorded"),
    }
}

/// The function, if it can be a test: no arguments, not generic, returns `()` or a
/// `Result`.
fn test_function(item: Item) -> syn::Result<ItemFn> {
    let Item::Fn(function) = item else {
        let (what, tokens) = describe(&item);
        return Err(syn::Error::new_spanned(
            tokens,
            format!("#[interleave] applies to a function, `fn name() {{ ... }}`; this is {what}"),
        ));
    };
    let mut errors = Errors::default();
    check_attrs(&function.attrs, &mut errors);
    check_signature(&function.sig, &mut errors);
    errors.finish()?;
    Ok(function)
}

/// What a non-function item is, and the tokens that name it (its keyword and name).
fn describe(item: &Item) -> (&'static str, TokenStream) {
    match item {
        Item::Struct(s) => ("a struct", named(&s.struct_token, &s.ident)),
        Item::Enum(e) => ("an enum", named(&e.enum_token, &e.ident)),
        Item::Union(u) => ("a union", named(&u.union_token, &u.ident)),
        Item::Const(c) => ("a constant", named(&c.const_token, &c.ident)),
        Item::Static(s) => ("a static", named(&s.static_token, &s.ident)),
        Item::Mod(m) => ("a module", named(&m.mod_token, &m.ident)),
        Item::Trait(t) => ("a trait", named(&t.trait_token, &t.ident)),
        Item::Type(t) => ("a type alias", named(&t.type_token, &t.ident)),
        Item::Impl(i) => ("an impl block", i.impl_token.to_token_stream()),
        Item::Use(u) => ("a `use` declaration", u.use_token.to_token_stream()),
        other => ("not a function", other.to_token_stream()),
    }
}

fn named(keyword: &dyn ToTokens, ident: &Ident) -> TokenStream {
    quote!(#keyword #ident)
}

/// `#[test]` (or another test attribute) is an error: the expansion adds its own.
fn check_attrs(attrs: &[Attribute], errors: &mut Errors) {
    for attr in attrs {
        if attr
            .path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "test")
        {
            errors.push(syn::Error::new_spanned(
                attr,
                "#[interleave] makes the function a test already; remove this attribute",
            ));
        }
    }
}

fn check_signature(sig: &Signature, errors: &mut Errors) {
    let mut error = |tokens: &dyn ToTokens, message: &str| {
        errors.push(syn::Error::new_spanned(tokens, message));
    };
    if let Some(t) = &sig.constness {
        error(t, "#[interleave] cannot run a `const fn`; remove `const`");
    }
    if let Some(t) = &sig.unsafety {
        error(
            t,
            "#[interleave] cannot run an `unsafe fn`; remove `unsafe` and use an `unsafe` block",
        );
    }
    if let Some(t) = &sig.abi {
        error(
            t,
            "#[interleave] cannot run an `extern` function; remove the ABI",
        );
    }
    if !sig.generics.params.is_empty() {
        error(
            &sig.generics,
            "#[interleave] test functions cannot be generic; remove the generic parameters",
        );
    } else if let Some(w) = &sig.generics.where_clause {
        error(
            w,
            "#[interleave] test functions cannot have a `where` clause",
        );
    }
    if !sig.inputs.is_empty() || sig.variadic.is_some() {
        error(
            &sig.inputs,
            "#[interleave] test functions take no arguments; create the model's state inside \
             the function",
        );
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        if !is_unit(ty) && !is_result(ty) {
            error(
                ty,
                "#[interleave] test functions return `()` or a `Result<(), E>` (an `Err` fails \
                 the execution, as a panic); check other results with `assert!` inside the \
                 function instead",
            );
        }
    }
}

/// A type named `Result` or `...Result` (`io::Result<()>`, `anyhow::Result<()>`, an alias):
/// that it is `Result<(), E>` with `E: Debug` is checked by the expansion's trait bound.
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident.to_string().ends_with("Result")),
        Type::Paren(p) => is_result(&p.elem),
        _ => false,
    }
}

fn is_unit(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Paren(p) => is_unit(&p.elem),
        _ => false,
    }
}

/// The test: `#[test]`, the function's own attributes in order, and a body that runs the
/// original body as the model of `run_test`.
fn test_fn(args: &Args, function: ItemFn) -> TokenStream {
    let krate = match &args.krate {
        Some(path) => path.to_token_stream(),
        None => crate::root::root(),
    };
    let ItemFn {
        attrs,
        vis,
        mut sig,
        block,
    } = function;
    // An `async fn` is the future `future::block_on` runs on the model's main thread,
    // with the runtime its arguments ask for, as in `#[tokio::test]`: current-thread
    // unless `flavor` says otherwise.
    let runtime = args.runtime.as_ref().map(|(r, _)| *r).unwrap_or_default();
    let (multi_thread, start_paused, local) =
        (runtime.multi_thread, runtime.start_paused, runtime.local);
    let workers = option(
        runtime
            .worker_threads
            .map(|n| Literal::usize_unsuffixed(n as usize)),
    );
    let runtime = quote!(#multi_thread, #workers, #start_paused, #local);
    // A `Result` the body returns (`?` inside it returns from the body alone) is checked
    // by `test_outcome`, and the test returns `()`.
    let output = match &sig.output {
        ReturnType::Type(_, ty) if !is_unit(ty) => Some(ty.clone()),
        _ => None,
    };
    if output.is_some() {
        sig.output = ReturnType::Default;
    }
    let body = match (sig.asyncness.take(), &output) {
        (Some(_), None) => quote!(#krate::__private::block_on_test(#runtime, async #block)),
        (Some(_), Some(ty)) => quote!(#krate::__private::test_outcome::<#ty>(
            #krate::__private::block_on_test(
                #runtime,
                #krate::__private::returning::<#ty, _>(async #block),
            )
        )),
        (None, None) => block.to_token_stream(),
        (None, Some(ty)) => quote!(#krate::__private::test_outcome::<#ty>((|| -> #ty #block)())),
    };
    let name = sig.ident.unraw().to_string();
    let iterations = option(args.iterations.map(Literal::u64_unsuffixed));
    let seed = option(args.seed.map(Literal::u64_unsuffixed));
    let max_steps = option(args.max_steps.map(Literal::u64_unsuffixed));
    let strategy = option(args.strategy.map(|s| strategy(&krate, s)));
    let partial = option(args.partial);
    let clock = option(args.paused_clock.map(|paused| match paused {
        true => quote!(#krate::Clock::Paused),
        false => quote!(#krate::Clock::Loaded),
    }));
    quote! {
        #[::core::prelude::v1::test]
        #(#attrs)*
        #vis #sig {
            #krate::__private::run_test(
                &#krate::__private::TestSpec {
                    name: ::core::concat!(::core::module_path!(), "::", #name),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    iterations: #iterations,
                    seed: #seed,
                    max_steps: #max_steps,
                    strategy: #strategy,
                    partial: #partial,
                    clock: #clock,
                    // How this crate is built, for the replay commands a failure prints;
                    // `interleave` is the switch of the README, maybe undeclared here.
                    cfg_interleave: {
                        #[allow(unexpected_cfgs)]
                        let on = ::core::cfg!(interleave);
                        on
                    },
                    release: !::core::cfg!(debug_assertions),
                },
                || #body,
            )
        }
    }
}

/// `Some(value)` or `None`, by absolute paths.
fn option<T: ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// The `StrategyKind` value of `strategy`.
fn strategy(krate: &TokenStream, strategy: Strategy) -> TokenStream {
    let kind = quote!(#krate::StrategyKind);
    match strategy {
        Strategy::Random => quote!(#kind::Random),
        Strategy::Pct { depth } => {
            let depth = match depth {
                Some(d) => Literal::u32_unsuffixed(d).to_token_stream(),
                None => quote!(#krate::DEFAULT_PCT_DEPTH),
            };
            quote!(#kind::Pct { depth: #depth })
        }
        Strategy::Dfs { max_preemptions } => {
            let bound = option(max_preemptions.map(Literal::u32_unsuffixed));
            quote!(#kind::Dfs { max_preemptions: #bound })
        }
    }
}
