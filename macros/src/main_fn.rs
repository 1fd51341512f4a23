//! `#[tokio::main]` under the `cfg` switch: the program's `main` is not a model, so the
//! expansion keeps the body type-checked (an `async` block made and dropped, never run)
//! and makes `main` stop with a message that says what to run instead.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemFn, ReturnType};

/// The expansion of `#[main(attr)] item`; Tokio's arguments are accepted and unused.
pub(crate) fn main(_attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut function = match syn::parse2::<ItemFn>(item) {
        Ok(function) => function,
        Err(error) => return error.to_compile_error(),
    };
    let sig = &mut function.sig;
    if sig.asyncness.take().is_none() {
        return syn::Error::new_spanned(
            sig.fn_token,
            "the `async` keyword is missing from the function declaration",
        )
        .to_compile_error();
    }
    // The body's output is the return type, which its `?`s need to know.
    let (attrs, vis, block) = (&function.attrs, &function.vis, &function.block);
    let root = crate::root::root();
    let body = match &sig.output {
        ReturnType::Type(_, ty) => {
            quote!(#root::__private::returning::<#ty, _>(async move #block))
        }
        ReturnType::Default => quote!(async move #block),
    };
    quote! {
        #(#attrs)*
        #vis #sig {
            let _body = #body;
            #root::__private::tokio_main()
        }
    }
}
