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
            clock = "paused",
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
                    clock: ::core::option::Option::Some(
                        my_reexport::interleave_test::Clock::Paused
                    ),
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
                    clock: ::core::option::Option::None,
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
                    clock: ::core::option::Option::None,
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
    // Current-thread and not paused by default, as `#[tokio::test]`.
    let runtime = |args: &str| {
        format!(
            ":: interleave_test :: __private :: block_on_test ({args} , async {{ g () . await ; }})"
        )
    };
    let none = ":: core :: option :: Option :: None";
    let cases = [
        (quote!(), format!("false , {none} , false , false")),
        (
            quote!(flavor = "current_thread"),
            format!("false , {none} , false , false"),
        ),
        (
            quote!(flavor = "multi_thread", worker_threads = 4),
            "true , :: core :: option :: Option :: Some (4) , false , false".to_string(),
        ),
        (
            quote!(start_paused = true),
            format!("false , {none} , true , false"),
        ),
        (
            quote!(flavor = "current_thread", start_paused = false),
            format!("false , {none} , false , false"),
        ),
    ];
    for (attr, args) in cases {
        let got = expand(attr.clone(), quote! { async fn f() { g().await; } });
        assert!(
            got.contains("fn f ()") && !got.contains("async fn") && got.contains(&runtime(&args)),
            "#[interleave({attr})]: {got}"
        );
    }
}

#[test]
fn the_local_flavor_runs_the_body_on_a_local_runtime() {
    let got = expand(
        quote!(flavor = "local", start_paused = true),
        quote! { async fn f() { g().await; } },
    );
    let none = ":: core :: option :: Option :: None";
    let wanted = format!(
        ":: interleave_test :: __private :: block_on_test (false , {none} , true , true , async {{ g () . await ; }})"
    );
    assert!(got.contains(&wanted), "{got}");
    let refused = expand(
        quote!(flavor = "local", worker_threads = 2),
        quote! { async fn f() {} },
    );
    assert!(refused.contains("compile_error"), "{refused}");
}

#[test]
fn runtime_arguments_are_checked_as_tokio_checks_them() {
    let item = quote! { async fn f() {} };
    let cases = [
        (
            quote!(flavor = "multi"),
            "unknown runtime flavor \"multi\"; use \"current_thread\", \"local\" or \"multi_thread\"",
        ),
        (
            quote!(flavor = multi_thread),
            "`flavor` takes a string literal, \"current_thread\", \"local\" or \"multi_thread\"",
        ),
        (
            quote!(worker_threads = 2),
            "`worker_threads` is a parameter of `flavor = \"multi_thread\"` only; add `flavor = \"multi_thread\"` or remove `worker_threads`",
        ),
        (
            quote!(flavor = "multi_thread", worker_threads = 0),
            "`worker_threads` is 0, but a runtime has at least one worker, as in Tokio; use at least 1",
        ),
        (
            quote!(flavor = "multi_thread", start_paused = true),
            "`start_paused = true` needs the current-thread runtime, as in Tokio; remove `flavor = \"multi_thread\"` or `start_paused`",
        ),
    ];
    for (attr, message) in cases {
        assert_eq!(
            errors(attr.clone(), item.clone()),
            [message],
            "#[interleave({attr})]"
        );
    }
    assert_eq!(
        errors(quote!(start_paused = true), quote! { fn f() {} }),
        [
            "`flavor`, `worker_threads` and `start_paused` choose the runtime of an `async fn`; make the test `async` or remove them"
        ]
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
fn the_clock_is_loaded_or_paused_on_any_function() {
    let loaded = expand(quote!(clock = "loaded"), quote! { fn f() {} });
    assert!(
        loaded.contains(
            "clock : :: core :: option :: Option :: Some (:: interleave_test :: Clock :: Loaded)"
        ),
        "{loaded}"
    );
    let multi = quote!(clock = "paused", flavor = "multi_thread");
    let paused = expand(multi, quote! { async fn f() {} });
    assert!(
        paused.contains(
            "clock : :: core :: option :: Option :: Some (:: interleave_test :: Clock :: Paused)"
        ),
        "{paused}"
    );
    assert_eq!(
        errors(quote!(clock = "frozen"), quote! { fn f() {} }),
        ["unknown clock \"frozen\"; use \"loaded\" or \"paused\""]
    );
    assert_eq!(
        errors(quote!(clock = true), quote! { fn f() {} }),
        ["`clock` takes a string literal, \"loaded\" or \"paused\""]
    );
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

/// The messages of the `compile_error!`s in the block a function-like macro expands to
/// when its input is wrong.
fn block_errors(expansion: TokenStream) -> Vec<String> {
    let block: syn::Block = syn::parse2(expansion).expect("a block of compile_error!s");
    block
        .stmts
        .iter()
        .map(|stmt| match stmt {
            syn::Stmt::Macro(m) => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
                assert_eq!(name.as_deref(), Some("compile_error"), "{}", quote!(#m));
                m.mac.parse_body::<syn::LitStr>().unwrap().value()
            }
            other => panic!("expected only errors, got {}", quote!(#other)),
        })
        .collect()
}

fn select_errors(input: TokenStream) -> Vec<String> {
    block_errors(crate::select::select(input))
}

#[test]
fn select_without_a_branch_is_an_error() {
    let none = "select! needs at least one branch: `<pattern> = <async expression> => <handler>`";
    assert_eq!(select_errors(quote!()), [none]);
    assert_eq!(select_errors(quote!(biased;)), [none]);
    assert_eq!(select_errors(quote!(else => 1)), [none]);
}

#[test]
fn select_takes_at_most_64_branches() {
    let branches = |n: usize| {
        let names = (0..n).map(|i| quote::format_ident!("v{i}"));
        quote!(#(#names = f() => 0,)*)
    };
    assert!(
        !crate::select::select(branches(64))
            .to_string()
            .contains("compile_error")
    );
    assert_eq!(
        select_errors(branches(65)),
        [
            "select! takes at most 64 branches, as Tokio's; this one has 65: split it, or select \
             over a collection of futures"
        ]
    );
}

#[test]
fn select_else_must_be_last_and_single() {
    assert_eq!(
        select_errors(quote!(else => 1, v = f() => v)),
        ["the `else` branch must come last, after every other branch"]
    );
    assert_eq!(
        select_errors(quote!(v = f() => v, else => 1, else => 2)),
        ["`else` is given twice: a select! has at most one `else` branch"]
    );
}

#[test]
fn select_reports_a_missing_token_where_it_is_missing() {
    let cases = [
        (
            quote!(v => f()),
            "expected `=` after the branch's pattern, then the async expression",
        ),
        (
            quote!(v = f() v),
            "expected `=>` after the async expression (and its `, if <precondition>`, if any), \
             then the handler",
        ),
        (
            quote!(v = f(), if ready),
            "unexpected end of input, expected `=>` after the async expression (and its \
             `, if <precondition>`, if any), then the handler",
        ),
        (
            quote!(v = f() => v w = g() => w),
            "expected `,` after the handler (a handler that is not a block ends with a comma)",
        ),
        (
            quote!(v = f() => v, else 1),
            "expected `=>` after `else`, then the handler",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(select_errors(input.clone()), [message], "{input}");
    }
}

#[test]
fn select_takes_optional_commas_after_block_handlers() {
    let got = crate::select::select(quote! {
        biased;
        Some(v) = f(), if ready => { v } (a, b) = g() => { a + b },
        _ = h() => 0
    });
    let text = got.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    // `biased;` polls in written order: no start decision.
    assert!(!text.contains("start_branch"), "{text}");
    let unbiased = crate::select::select(quote!(v = f() => v)).to_string();
    assert!(unbiased.contains("start_branch"), "{unbiased}");
}

#[test]
fn a_select_pattern_is_tested_by_value_without_binding_modes() {
    let pattern = |tokens: TokenStream| {
        let pat = syn::parse::Parser::parse2(syn::Pat::parse_multi_with_leading_vert, tokens);
        let parts = crate::select::Bindings::of(&pat.unwrap());
        let test = parts.test;
        let names = parts.names.iter().map(|n| quote!(#n).to_string());
        (quote!(#test).to_string(), names.collect::<Vec<_>>())
    };
    let cases = [
        (quote!(Some(mut x)), "Some (x)", vec!["mut x"]),
        (
            quote!(Foo { ref a, b: ref mut c, .. }),
            "Foo { a , b : c , .. }",
            vec!["ref a", "ref mut c"],
        ),
        (
            quote!(all @ (Ok(x) | Err(x))),
            "all @ (Ok (x) | Err (x))",
            vec!["all", "x"],
        ),
        // Uppercase names are constants, unit structs or unit variants; lowercase ones
        // bind (a lowercase constant still works: its value is tested again).
        (
            quote!((None, MAX, r#type)),
            "(None , MAX , r#type)",
            vec!["r#type"],
        ),
        (quote!(&[first, .., _]), "& [first , .. , _]", vec!["first"]),
    ];
    for (input, test, names) in cases {
        let names: Vec<String> = names.into_iter().map(str::to_owned).collect();
        assert_eq!(pattern(input.clone()), (test.to_owned(), names), "{input}");
    }
}

#[test]
fn join_takes_biased_only_before_a_semicolon() {
    let biased = crate::join::join(crate::join::Kind::Join, quote!(biased; a, b)).to_string();
    assert!(!biased.contains("next_turn"), "{biased}");
    // `biased` followed by a comma is a future named `biased`.
    let named = crate::join::join(crate::join::Kind::Join, quote!(biased, b)).to_string();
    assert!(
        named.contains("next_turn") && named.contains("into_future (biased)"),
        "{named}"
    );
    let empty = crate::join::join(crate::join::Kind::TryJoin, quote!()).to_string();
    assert!(
        empty.contains("ready (") && empty.contains("Ok (())"),
        "{empty}"
    );
    let error = crate::join::join(crate::join::Kind::Join, quote!(a b));
    assert_eq!(block_errors(error), ["expected `,`"]);
}

#[test]
fn a_result_returned_is_checked_by_the_model_and_the_test_returns_unit() {
    let got = expand(
        quote!(),
        quote! { fn f() -> Result<(), E> { g()?; Ok(()) } },
    );
    assert!(
        got.contains("fn f ()")
            && !got.contains("fn f () ->")
            && got.contains(
                ":: interleave_test :: __private :: test_outcome :: < Result < () , E > > \
                 ((|| -> Result < () , E > { g () ? ; Ok (()) }) ())"
            ),
        "{got}"
    );
    let got = expand(
        quote!(),
        quote! { async fn f() -> io::Result<()> { Ok(()) } },
    );
    assert!(
        got.contains("fn f ()")
            && got.contains(
                ":: interleave_test :: __private :: test_outcome :: < io :: Result < () > >"
            )
            && got.contains(
                ":: interleave_test :: __private :: returning :: < io :: Result < () > , _ > \
                 (async { Ok (()) })"
            ),
        "{got}"
    );
}

#[test]
fn tokio_main_keeps_the_body_type_checked_and_stops() {
    let got = crate::main_fn::main(
        quote!(flavor = "multi_thread", worker_threads = 2),
        quote! { #[allow(unused)] async fn main() -> io::Result<()> { run().await } },
    )
    .to_string();
    assert_eq!(
        got,
        "# [allow (unused)] fn main () -> io :: Result < () > { let _body = :: interleave_test \
         :: __private :: returning :: < io :: Result < () > , _ > (async move { run () . await }) ; \
         :: interleave_test :: __private :: tokio_main () }"
    );
    let got = crate::main_fn::main(quote!(), quote! { fn main() {} }).to_string();
    assert!(
        got.contains("the `async` keyword is missing from the function declaration"),
        "{got}"
    );
}

#[test]
fn through_the_switch_paths_start_at_the_switch_and_only_for_that_expansion() {
    use crate::root::{Entry, through};
    let item = quote! { fn t() {} };
    let switched = through(Entry::Switch, || expand(quote!(), item.clone()));
    assert!(
        switched.contains(":: tokio :: __interleave :: __private :: run_test"),
        "{switched}"
    );
    assert!(!switched.contains("interleave_test ::"), "{switched}");
    let select = through(Entry::Switch, || {
        crate::select::select(quote!(_ = a => {}, _ = b => {})).to_string()
    });
    assert!(select.contains(":: tokio :: __private"), "{select}");
    assert!(!select.contains("interleave_test"), "{select}");
    // The flag does not outlive the expansion, even one that panics.
    let _ = std::panic::catch_unwind(|| through(Entry::Switch, || panic!("expansion")));
    let plain = expand(quote!(), item.clone());
    assert!(
        plain.contains(":: interleave_test :: __private :: run_test"),
        "{plain}"
    );
    // An explicit `crate` wins over the switch's root.
    let named = through(Entry::Switch, || {
        expand(quote!(crate = my::it), quote! { fn t() {} })
    });
    assert!(
        named.contains("my :: it :: __private :: run_test"),
        "{named}"
    );
    // Through the Tokio crate, `interleave_test` is found through it.
    let tokio = through(Entry::Tokio, || expand(quote!(), item));
    assert!(
        tokio.contains(":: interleave_test_tokio :: __interleave :: __private :: run_test"),
        "{tokio}"
    );
    let select = through(Entry::Tokio, || {
        crate::select::select(quote!(_ = a => {}, _ = b => {})).to_string()
    });
    assert!(
        select.contains(":: interleave_test_tokio :: __private"),
        "{select}"
    );
}
