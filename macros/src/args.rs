//! The attribute's arguments: `key = value` pairs, each checked on its own, then together.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, ExprLit, ExprPath, Ident, Lit, LitInt, LitStr, Path, Token};

use crate::errors::Errors;

/// Every key, in the order messages list them.
const KEYS: [&str; 12] = [
    "iterations",
    "seed",
    "max_steps",
    "strategy",
    "depth",
    "max_preemptions",
    "partial",
    "clock",
    "flavor",
    "worker_threads",
    "start_paused",
    "crate",
];

/// The keys as messages list them.
const KEY_LIST: &str = "`iterations`, `seed`, `max_steps`, `strategy`, `depth`, \
                        `max_preemptions`, `partial`, `clock`, `flavor`, `worker_threads`, \
                        `start_paused` and `crate`";

/// The strategy names, as messages list them (after "one of").
const STRATEGY_LIST: &str = "\"random\", \"pct\" or \"dfs\"";

/// One argument as written: `key = value`, or a key followed by something else (an error
/// reported once the key is known to be valid).
pub(crate) struct Arg {
    key: Ident,
    value: ArgValue,
}

enum ArgValue {
    /// `= value`.
    Given(Token![=], Expr),
    /// What stands after the key instead of `= value`, up to the next comma (maybe nothing).
    Malformed(TokenStream),
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if !input.peek(Ident::peek_any) {
            return Err(input.error(format!(
                "expected an argument `key = value`; the keys are {KEY_LIST}"
            )));
        }
        // `parse_any` also accepts the keyword `crate`.
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            ArgValue::Given(input.parse()?, input.parse()?)
        } else {
            ArgValue::Malformed(rest_of_argument(input)?)
        };
        Ok(Arg { key, value })
    }
}

/// The token trees up to the next top-level comma.
fn rest_of_argument(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut tokens = TokenStream::new();
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            tokens.extend([tt]);
            rest = next;
        }
        Ok((tokens, rest))
    })
}

impl ToTokens for Arg {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.key.to_tokens(tokens);
        match &self.value {
            ArgValue::Given(eq, value) => tokens.extend(quote!(#eq #value)),
            ArgValue::Malformed(rest) => rest.to_tokens(tokens),
        }
    }
}

impl Arg {
    /// The key, without the `r#` of a raw identifier.
    fn name(&self) -> String {
        self.key.unraw().to_string()
    }

    /// The value, or an error that shows how the argument is written.
    fn value(&self) -> syn::Result<&Expr> {
        let key = self.name();
        match &self.value {
            ArgValue::Given(_, value) => Ok(value),
            ArgValue::Malformed(_) => Err(syn::Error::new_spanned(
                self,
                format!("`{key}` takes a value, as in `{}`", example(&key)),
            )),
        }
    }
}

/// How an argument is written, for messages.
fn example(key: &str) -> &'static str {
    match key {
        "iterations" => "iterations = 500",
        "seed" => "seed = 7",
        "max_steps" => "max_steps = 10_000",
        "strategy" => "strategy = \"pct\"",
        "depth" => "depth = 3",
        "max_preemptions" => "max_preemptions = 2",
        "clock" => "clock = \"paused\"",
        "flavor" => "flavor = \"multi_thread\"",
        "worker_threads" => "worker_threads = 2",
        _ => "crate = my_reexports::interleave_test",
    }
}

/// The strategy the attribute names, with its parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `strategy = "random"`.
    Random,
    /// `strategy = "pct"`; no depth means the runtime's default depth.
    Pct { depth: Option<u32> },
    /// `strategy = "dfs"`; no bound means every schedule.
    Dfs { max_preemptions: Option<u32> },
}

/// The checked arguments. `None` leaves the setting to the runtime (environment, default).
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) iterations: Option<u64>,
    pub(crate) seed: Option<u64>,
    pub(crate) max_steps: Option<u64>,
    pub(crate) strategy: Option<Strategy>,
    /// `partial = true`: a DFS search that did not finish passes.
    pub(crate) partial: Option<bool>,
    /// `clock = "paused"` (`true`) or `"loaded"` (`false`).
    pub(crate) paused_clock: Option<bool>,
    /// `crate = path`: where the runtime is, when not at `::interleave_test`.
    pub(crate) krate: Option<Path>,
    /// The runtime an `async fn` runs in, as `#[tokio::test]`'s arguments name it; the
    /// first argument that asks for one, to point at when the function is not `async`.
    pub(crate) runtime: Option<(Runtime, TokenStream)>,
}

/// The Tokio-shaped runtime of an `async fn` test: `flavor`, `worker_threads` (with
/// `flavor = "multi_thread"`: what the runtime's metrics report), `start_paused`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Runtime {
    pub(crate) multi_thread: bool,
    /// `flavor = "local"`: a current-thread runtime whose `block_on` runs the body with
    /// `!Send` tasks (Tokio's `LocalRuntime`).
    pub(crate) local: bool,
    pub(crate) worker_threads: Option<u32>,
    pub(crate) start_paused: bool,
}

impl Args {
    /// Checks `args`, reporting every mistake at once.
    pub(crate) fn from_list<'a>(args: impl IntoIterator<Item = &'a Arg>) -> syn::Result<Args> {
        let mut raw = Raw::default();
        let mut errors = Errors::default();
        for arg in args {
            errors.check(raw.take(arg));
        }
        let strategy = errors.check(raw.strategy()).flatten();
        let runtime = errors.check(raw.runtime());
        errors.finish()?;
        Ok(Args {
            iterations: raw.iterations,
            seed: raw.seed,
            max_steps: raw.max_steps,
            strategy,
            partial: raw.partial,
            paused_clock: raw.paused_clock,
            krate: raw.krate,
            runtime: runtime.flatten(),
        })
    }
}

/// The strategy name, before its parameters are attached.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StrategyName {
    Random,
    Pct,
    Dfs,
}

/// Arguments as they are read, before the checks that involve several of them.
#[derive(Default)]
struct Raw<'a> {
    /// The keys read so far, valid or not, to catch one given twice.
    seen: Vec<String>,
    iterations: Option<u64>,
    seed: Option<u64>,
    max_steps: Option<u64>,
    /// Whether `strategy` was given at all (maybe with a bad value).
    strategy_given: bool,
    strategy: Option<StrategyName>,
    depth: Option<(u32, &'a Arg)>,
    max_preemptions: Option<(u32, &'a Arg)>,
    partial: Option<bool>,
    paused_clock: Option<bool>,
    krate: Option<Path>,
    /// `flavor`.
    flavor: Option<(Flavor, &'a Arg)>,
    worker_threads: Option<(u32, &'a Arg)>,
    start_paused: Option<(bool, &'a Arg)>,
}

impl<'a> Raw<'a> {
    /// Reads one argument.
    fn take(&mut self, arg: &'a Arg) -> syn::Result<()> {
        let key = arg.name();
        if !KEYS.contains(&key.as_str()) {
            return Err(syn::Error::new_spanned(
                &arg.key,
                format!("unknown argument `{key}`; the arguments are {KEY_LIST}"),
            ));
        }
        if self.seen.contains(&key) {
            return Err(syn::Error::new_spanned(
                arg,
                format!("`{key}` is given twice; keep one of them"),
            ));
        }
        self.seen.push(key.clone());
        if key == "strategy" {
            self.strategy_given = true;
        }
        let value = arg.value()?;
        match key.as_str() {
            "iterations" => self.iterations = Some(at_least_one(int(&key, value)?, &key, value)?),
            "seed" => self.seed = Some(int(&key, value)?),
            "max_steps" => self.max_steps = Some(at_least_one(int(&key, value)?, &key, value)?),
            "strategy" => self.strategy = Some(strategy_name(value)?),
            "depth" => self.depth = Some((at_least_one(int(&key, value)?, &key, value)?, arg)),
            "max_preemptions" => self.max_preemptions = Some((int(&key, value)?, arg)),
            "partial" => self.partial = Some(boolean(&key, value)?),
            "clock" => self.paused_clock = Some(clock(value)?),
            "flavor" => self.flavor = Some((flavor(value)?, arg)),
            "worker_threads" => {
                let n = at_least_one(int::<u32>(&key, value)?, &key, value)?;
                self.worker_threads = Some((n, arg));
            }
            "start_paused" => self.start_paused = Some((boolean(&key, value)?, arg)),
            _ => self.krate = Some(crate_path(value)?),
        }
        Ok(())
    }

    /// The strategy with its parameter; an error for a parameter of another strategy. When
    /// `strategy` was given with a bad value, that value has its own error, and these checks
    /// are skipped: they would only repeat it.
    fn strategy(&self) -> syn::Result<Option<Strategy>> {
        let name = self.strategy;
        if self.strategy_given && name.is_none() {
            return Ok(None);
        }
        let mut errors = Errors::default();
        if let Some((_, arg)) = self.depth.filter(|_| name != Some(StrategyName::Pct)) {
            errors.push(misplaced(arg, "depth", "pct"));
        }
        if let Some((_, arg)) = self
            .max_preemptions
            .filter(|_| name != Some(StrategyName::Dfs))
        {
            errors.push(misplaced(arg, "max_preemptions", "dfs"));
        }
        errors.finish()?;
        Ok(name.map(|name| match name {
            StrategyName::Random => Strategy::Random,
            StrategyName::Pct => Strategy::Pct {
                depth: self.depth.map(|(d, _)| d),
            },
            StrategyName::Dfs => Strategy::Dfs {
                max_preemptions: self.max_preemptions.map(|(b, _)| b),
            },
        }))
    }
}

impl Raw<'_> {
    /// The runtime, as `#[tokio::test]` checks its arguments: `worker_threads` needs
    /// `flavor = "multi_thread"`, `start_paused` needs the current-thread flavour.
    fn runtime(&self) -> syn::Result<Option<(Runtime, TokenStream)>> {
        let multi_thread = self.flavor.is_some_and(|(f, _)| f == Flavor::MultiThread);
        let mut errors = Errors::default();
        if let Some((_, arg)) = self.worker_threads.filter(|_| !multi_thread) {
            let message = "`worker_threads` is a parameter of `flavor = \"multi_thread\"` \
                           only; add `flavor = \"multi_thread\"` or remove `worker_threads`";
            errors.push(syn::Error::new_spanned(arg, message));
        }
        if let Some((_, arg)) = self.start_paused.filter(|(on, _)| *on && multi_thread) {
            let message = "`start_paused = true` needs the current-thread runtime, as in \
                           Tokio; remove `flavor = \"multi_thread\"` or `start_paused`";
            errors.push(syn::Error::new_spanned(arg, message));
        }
        errors.finish()?;
        let first = [
            self.flavor.map(|(_, a)| a),
            self.worker_threads.map(|(_, a)| a),
            self.start_paused.map(|(_, a)| a),
        ];
        let Some(first) = first.into_iter().flatten().next() else {
            return Ok(None);
        };
        let runtime = Runtime {
            multi_thread,
            local: self.flavor.is_some_and(|(f, _)| f == Flavor::Local),
            worker_threads: self.worker_threads.map(|(n, _)| n),
            start_paused: self.start_paused.is_some_and(|(on, _)| on),
        };
        Ok(Some((runtime, first.to_token_stream())))
    }
}

/// `"paused"` (`true`) or `"loaded"` (`false`): the runtime's `Clock`.
fn clock(value: &Expr) -> syn::Result<bool> {
    const CLOCKS: &str = "\"loaded\" or \"paused\"";
    let lit = string_literal(value, "clock", CLOCKS)?;
    match lit.value().as_str() {
        "loaded" => Ok(false),
        "paused" => Ok(true),
        other => Err(syn::Error::new_spanned(
            lit,
            format!("unknown clock {other:?}; use {CLOCKS}"),
        )),
    }
}

/// A runtime flavour, as `#[tokio::test]` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    CurrentThread,
    MultiThread,
    /// Tokio's `LocalRuntime`: current-thread, `spawn_local` without a `LocalSet`.
    Local,
}

/// `"current_thread"`, `"multi_thread"` or `"local"`.
fn flavor(value: &Expr) -> syn::Result<Flavor> {
    const FLAVORS: &str = "\"current_thread\", \"local\" or \"multi_thread\"";
    let lit = string_literal(value, "flavor", FLAVORS)?;
    match lit.value().as_str() {
        "current_thread" => Ok(Flavor::CurrentThread),
        "multi_thread" => Ok(Flavor::MultiThread),
        "local" => Ok(Flavor::Local),
        other => Err(syn::Error::new_spanned(
            lit,
            format!("unknown runtime flavor {other:?}; use {FLAVORS}"),
        )),
    }
}

/// The error for a parameter given without its strategy.
fn misplaced(arg: &Arg, key: &str, strategy: &str) -> syn::Error {
    let message = format!(
        "`{key}` is a parameter of `strategy = \"{strategy}\"` only; add `strategy = \
         \"{strategy}\"` or remove `{key}`"
    );
    syn::Error::new_spanned(arg, message)
}

/// An integer literal that fits in `N` (a `u64` or `u32`), unsuffixed or with `N`'s suffix.
fn int<N>(key: &str, value: &Expr) -> syn::Result<N>
where
    N: std::str::FromStr + TypeName,
    N::Err: std::fmt::Display,
{
    let Expr::Lit(ExprLit {
        lit: Lit::Int(lit), ..
    }) = value
    else {
        return Err(syn::Error::new_spanned(
            value,
            format!(
                "`{key}` takes an unsigned integer literal, as in `{}`",
                example(key)
            ),
        ));
    };
    check_suffix(lit, key, N::NAME)?;
    lit.base10_parse()
        .map_err(|_| syn::Error::new_spanned(lit, format!("`{key}` must fit in a {}", N::NAME)))
}

fn check_suffix(lit: &LitInt, key: &str, ty: &str) -> syn::Result<()> {
    match lit.suffix() {
        "" => Ok(()),
        s if s == ty => Ok(()),
        s => Err(syn::Error::new_spanned(
            lit,
            format!("`{key}` is a {ty}; write the number without the suffix `{s}`"),
        )),
    }
}

/// The name of an integer type, for messages.
trait TypeName {
    const NAME: &'static str;
}

impl TypeName for u64 {
    const NAME: &'static str = "u64";
}

impl TypeName for u32 {
    const NAME: &'static str = "u32";
}

/// `n`, or an error at `value` when it is 0: an iteration count, step limit or PCT depth that
/// the runtime would reject fails to compile instead.
fn at_least_one<N: Into<u64> + Copy>(n: N, key: &str, value: &Expr) -> syn::Result<N> {
    if n.into() != 0 {
        return Ok(n);
    }
    let why = match key {
        "iterations" => "which would run no execution",
        "max_steps" => "so no execution could take a step",
        "worker_threads" => "but a runtime has at least one worker, as in Tokio",
        _ => "but the PCT depth counts the ordering constraints a bug needs (the default is 3)",
    };
    Err(syn::Error::new_spanned(
        value,
        format!("`{key}` is 0, {why}; use at least 1"),
    ))
}

/// `"random"`, `"pct"` or `"dfs"`.
/// A `true` or `false` literal.
fn boolean(key: &str, value: &Expr) -> syn::Result<bool> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` takes `true` or `false`"),
        )),
    }
}

/// The string literal `value` of argument `arg`, or an error that lists `choices`.
fn string_literal<'a>(value: &'a Expr, arg: &str, choices: &str) -> syn::Result<&'a LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{arg}` takes a string literal, {choices}"),
        )),
    }
}

fn strategy_name(value: &Expr) -> syn::Result<StrategyName> {
    let lit = string_literal(value, "strategy", &format!("one of {STRATEGY_LIST}"))?;
    match lit.value().as_str() {
        "random" => Ok(StrategyName::Random),
        "pct" => Ok(StrategyName::Pct),
        "dfs" => Ok(StrategyName::Dfs),
        other => Err(syn::Error::new_spanned(
            lit,
            format!("unknown strategy {other:?}; use one of {STRATEGY_LIST}"),
        )),
    }
}

/// A path, written bare (`crate = a::b`) or, as tokio and serde write it, in a string.
fn crate_path(value: &Expr) -> syn::Result<Path> {
    match value {
        Expr::Path(ExprPath {
            attrs,
            qself: None,
            path,
        }) if attrs.is_empty() => Ok(path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit.parse().map_err(|_| not_a_path(lit)),
        _ => Err(not_a_path(value)),
    }
}

fn not_a_path(value: &dyn ToTokens) -> syn::Error {
    syn::Error::new_spanned(
        value,
        format!(
            "`crate` takes the path of the interleave_test crate, as in `{}`",
            example("crate")
        ),
    )
}
