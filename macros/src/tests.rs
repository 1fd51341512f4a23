//! The expansion, token for token, and the errors that only show in combination.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::interleave;

fn expand(attr: TokenStream, item: TokenStream) -> String {
    interleave(attr, item).to_string()
}

#[test]
fn every_argument_expands_to_its_field() {
    let got = expand(
        quote!(
            iterations = 500,
            seed = 7,
            strategy = "pct",
            depth = 3,
            max_steps = 10_000,
            partial = true,
            crate = my_reexport::interleave_test
        ),
        quote! {
            /// Docs.
            #[should_panic(expected = "x")]
            fn name() { body(); }
        },
    );
    let built = built();
    let want = quote! {
        #[::core::prelude::v1::test]
        #[doc = r" Docs."]
        #[should_panic(expected = "x")]
        fn name() {
            my_reexport::interleave_test::__private::run_test(
                &my_reexport::interleave_test::__private::TestSpec {
                    name: ::core::concat!(::core::module_path!(), "::", "name"),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    iterations: ::core::option::Option::Some(500),
                    seed: ::core::option::Option::Some(7),
                    max_steps: ::core::option::Option::Some(10000),
                    strategy: ::core::option::Option::Some(
                        my_reexport::interleave_test::StrategyKind::Pct { depth: 3 }
                    ),
                    partial: ::core::option::Option::Some(true),
                    #built
                },
                || { body(); },
            )
        }
    };
    assert_eq!(got, want.to_string());
}

#[test]
fn no_argument_leaves_every_setting_to_the_runtime() {
    let got = expand(quote!(), quote! { pub(crate) fn r#match() -> () {} });
    let built = built();
    let want = quote! {
        #[::core::prelude::v1::test]
        pub(crate) fn r#match() -> () {
            ::interleave_test::__private::run_test(
                &::interleave_test::__private::TestSpec {
                    name: ::core::concat!(::core::module_path!(), "::", "match"),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    iterations: ::core::option::Option::None,
                    seed: ::core::option::Option::None,
                    max_steps: ::core::option::Option::None,
                    strategy: ::core::option::Option::None,
                    partial: ::core::option::Option::None,
                    #built
                },
                || {},
            )
        }
    };
    assert_eq!(got, want.to_string());
}

/// The fields every expansion ends with: how the test's crate is built.
fn built() -> TokenStream {
    quote! {
        cfg_interleave: {
            #[allow(unexpected_cfgs)]
            let on = ::core::cfg!(interleave);
            on
        },
        release: !::core::cfg!(debug_assertions),
    }
}

/// The expansion of `attr` on `fn f() {}`, with no argument but the strategy: `strategy`.
fn with_strategy(strategy: TokenStream) -> String {
    let built = built();
    quote! {
        #[::core::prelude::v1::test]
        fn f() {
            ::interleave_test::__private::run_test(
                &::interleave_test::__private::TestSpec {
                    name: ::core::concat!(::core::module_path!(), "::", "f"),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    iterations: ::core::option::Option::None,
                    seed: ::core::option::Option::None,
                    max_steps: ::core::option::Option::None,
                    strategy: ::core::option::Option::Some(#strategy),
                    partial: ::core::option::Option::None,
                    #built
                },
                || {},
            )
        }
    }
    .to_string()
}

#[test]
fn strategy_parameters_default_to_the_runtimes() {
    let kind = quote!(::interleave_test::StrategyKind);
    let none = quote!(::core::option::Option::None);
    let cases = [
        (
            quote!(strategy = "pct"),
            quote!(#kind::Pct { depth: ::interleave_test::DEFAULT_PCT_DEPTH }),
        ),
        (
            quote!(strategy = "pct", depth = 2),
            quote!(#kind::Pct { depth: 2 }),
        ),
        (
            quote!(strategy = "dfs"),
            quote!(#kind::Dfs { max_preemptions: #none }),
        ),
        (
            quote!(max_preemptions = 0, strategy = "dfs"),
            quote!(#kind::Dfs { max_preemptions: ::core::option::Option::Some(0) }),
        ),
        (quote!(strategy = "random"), quote!(#kind::Random)),
    ];
    for (attr, strategy) in cases {
        let got = expand(attr.clone(), quote! { fn f() {} });
        assert_eq!(got, with_strategy(strategy), "#[interleave({attr})]");
    }
}

/// The messages of the `compile_error!`s in an expansion, in order.
fn errors(attr: TokenStream, item: TokenStream) -> Vec<String> {
    let got = interleave(attr, item);
    let file: syn::File = syn::parse2(got).expect("compile_error! items");
    file.items
        .iter()
        .map(|item| match item {
            syn::Item::Macro(m) => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
                assert_eq!(name.as_deref(), Some("compile_error"), "{}", quote!(#m));
                m.mac.parse_body::<syn::LitStr>().unwrap().value()
            }
            other => panic!("expected only errors, got {}", quote!(#other)),
        })
        .collect()
}

#[test]
fn an_async_fn_becomes_a_test_whose_model_blocks_on_its_body() {
    let got = expand(quote!(), quote! { async fn f() { g().await; } });
    assert!(
        got.contains("fn f ()")
            && !got.contains("async fn")
            && got.contains(":: interleave_test :: future :: block_on (async { g () . await ; })"),
        "{got}"
    );
}

#[test]
fn a_bad_strategy_is_reported_alone_not_with_its_parameter() {
    assert_eq!(
        errors(quote!(strategy = "bfs", depth = 2), quote! { fn f() {} }),
        [r#"unknown strategy "bfs"; use one of "random", "pct" or "dfs""#]
    );
}

#[test]
fn every_mistake_is_reported_in_one_expansion() {
    let got = errors(
        quote!(seed = 1, seed = 2, iterations = 0, strategy = 3),
        quote! { unsafe fn f(x: u8) {} },
    );
    assert_eq!(got.len(), 5, "{got:#?}");
    assert!(got[0].starts_with("`seed` is given twice"), "{got:#?}");
    assert!(got[1].starts_with("`iterations` is 0"), "{got:#?}");
    assert!(
        got[2].starts_with("`strategy` takes a string literal"),
        "{got:#?}"
    );
    assert!(got[3].contains("`unsafe fn`"), "{got:#?}");
    assert!(got[4].contains("take no arguments"), "{got:#?}");
}

#[test]
fn a_value_that_does_not_fit_its_field_is_an_error() {
    assert_eq!(
        errors(
            quote!(strategy = "dfs", max_preemptions = 4294967296),
            quote! { fn f() {} }
        ),
        ["`max_preemptions` must fit in a u32"]
    );
}
