//! `join!` and `try_join!`: parsing and expansion, and the helpers `select!` shares.
//!
//! `join!(a, b)` becomes a block that turns each expression into a future, pins it on the
//! stack in an `Option` (emptied when the future finishes, so it is dropped then and never
//! polled again), and polls the unfinished ones in one `poll_fn`, from a starting future
//! that moves one on at each poll (Tokio's rotation) or is always the first (`biased;`).
//! Each output waits in an `Option` of its own until all are there.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Token};

/// Which of the two macros is expanded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `join!`: every output, in a tuple.
    Join,
    /// `try_join!`: `Ok` of every `Ok` value, or the first `Err`.
    TryJoin,
}

/// The expansion of `join!(input)` or `try_join!(input)`, or its errors.
pub(crate) fn join(kind: Kind, input: TokenStream) -> TokenStream {
    match Joined::parse.parse2(input) {
        Ok(joined) => expand(kind, &joined),
        Err(error) => errors_block(&error),
    }
}

/// A parsed `join!`: `biased;` or not, then the future expressions.
struct Joined {
    biased: bool,
    futures: Vec<Expr>,
}

impl Parse for Joined {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let biased = parse_biased(input)?;
        let futures = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        Ok(Joined {
            biased,
            futures: futures.into_iter().collect(),
        })
    }
}

/// Consumes a leading `biased;` and says whether there was one. (`biased` alone, or
/// followed by anything else, is left for the caller: it may be a variable.)
pub(crate) fn parse_biased(input: ParseStream<'_>) -> syn::Result<bool> {
    let fork = input.fork();
    let is_biased = fork
        .parse::<Ident>()
        .is_ok_and(|ident| ident == "biased" && fork.peek(Token![;]));
    if is_biased {
        input.parse::<Ident>()?;
        input.parse::<Token![;]>()?;
    }
    Ok(is_biased)
}

/// The path of the runtime support the expansions call, from [`crate::root::tokio_root`] (a
/// renamed `interleave_test_tokio` dependency is not supported, as Tokio's macros do not
/// support a renamed `tokio`).
pub(crate) fn private() -> TokenStream {
    let root = crate::root::tokio_root();
    quote!(#root::__private)
}

/// A local variable of an expansion: hygienic, so the user's code neither sees it nor has
/// its own variables shadowed by it.
pub(crate) fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// `n` locals named `prefix0`, `prefix1`, ...
pub(crate) fn locals(prefix: &str, n: usize) -> Vec<Ident> {
    (0..n).map(|i| local(&format!("{prefix}{i}"))).collect()
}

/// The errors as an expression: a block of `compile_error!`s, valid where the macro's
/// value is expected.
pub(crate) fn errors_block(error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    quote!({ #errors })
}

/// The block that evaluates the futures in order, then polls them to the end.
fn expand(kind: Kind, joined: &Joined) -> TokenStream {
    let p = private();
    let n = joined.futures.len();
    if n == 0 {
        let value = match kind {
            Kind::Join => quote!(()),
            Kind::TryJoin => quote!(#p::Result::Ok(())),
        };
        // Still an `.await`, so that the macro is an async context's alone, as Tokio's.
        return quote!(#p::ready(#value).await);
    }
    let futures = locals("__future", n);
    let outputs = locals("__output", n);
    let exprs = &joined.futures;
    let (turn, cx, joined_value) = (local("__turn"), local("__cx"), local("__joined"));
    let body = poll_body(kind, joined.biased, &futures, &outputs);
    let turn = (!joined.biased).then(|| quote!(let mut #turn: usize = 0;));
    quote!({
        #(
            let mut #futures = #p::pin!(#p::Option::Some(#p::IntoFuture::into_future(#exprs)));
            let mut #outputs = #p::Option::None;
        )*
        #turn
        let #joined_value = #p::poll_fn(|#cx: &mut #p::Context<'_>| { #body }).await;
        #joined_value
    })
}

/// The body of the `poll_fn`: one round over the unfinished futures, then the outputs if
/// all are done.
fn poll_body(kind: Kind, biased: bool, futures: &[Ident], outputs: &[Ident]) -> TokenStream {
    let p = private();
    let n = futures.len();
    let (turn, cx, from, step) = (
        local("__turn"),
        local("__cx"),
        local("__from"),
        local("__step"),
    );
    let error = local("__error");
    let first = match biased {
        true => quote!(0usize),
        false => quote!(#p::next_turn(&mut #turn, #n)),
    };
    let polls = futures.iter().zip(outputs).enumerate().map(|(i, (f, o))| {
        let poll = match kind {
            Kind::Join => quote!(#p::poll_join(#f.as_mut(), &mut #o, #cx)),
            Kind::TryJoin => quote! {
                if let #p::Result::Err(#error) = #p::poll_try_join(#f.as_mut(), &mut #o, #cx) {
                    return #p::Poll::Ready(#p::Result::Err(#error));
                }
            },
        };
        quote!(#i => { #poll })
    });
    let done = quote!(#(#p::Option::is_none(&*#futures))&&*);
    let all = quote!((#(#p::take_output(&mut #outputs),)*));
    let ready = match kind {
        Kind::Join => quote!(#p::Poll::Ready(#all)),
        Kind::TryJoin => quote!(#p::Poll::Ready(#p::Result::Ok(#all))),
    };
    quote! {
        let #from: usize = #first;
        for #step in 0..#n {
            match #p::round(#from, #step, #n) {
                #(#polls)*
                _ => {}
            }
        }
        if #done { #ready } else { #p::Poll::Pending }
    }
}
