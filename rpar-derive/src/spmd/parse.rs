//! The input of `spmd!`: `key = value` pairs, then a one-parameter closure.

use proc_macro2::{Ident, Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Pat, Token};

/// What launches the ranks.
pub(crate) enum Launch {
    /// `ranks = N`
    Ranks(Expr),
    /// `topology = T`, perhaps with `ranks = N` beside it (which must then equal `T`'s size).
    Topology {
        /// The type declared with `topology!`.
        ty: Box<syn::Type>,
        /// `ranks = N`, if also given.
        ranks: Option<Expr>,
    },
}

/// A parsed `spmd!` invocation.
pub(crate) struct Spmd {
    pub(crate) launch: Launch,
    /// `move` or not, as written.
    pub(crate) capture: Option<Token![move]>,
    /// The communicator's name inside the body.
    pub(crate) comm: Ident,
    /// The type the parameter was annotated with, if any.
    pub(crate) comm_ty: Option<Box<syn::Type>>,
    pub(crate) body: TokenStream,
}

const KEYS: &str = "expected `ranks = N` or `topology = T`";

impl Parse for Spmd {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut ranks: Option<Expr> = None;
        let mut topology: Option<syn::Type> = None;
        let mut errors: Option<syn::Error> = None;
        let mut push = |e: syn::Error| match &mut errors {
            Some(all) => all.combine(e),
            None => errors = Some(e),
        };
        // key = value pairs until the closure
        while input.peek(syn::Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            if key == "topology" {
                if topology.is_some() {
                    push(syn::Error::new(key.span(), "`topology` is given twice"));
                }
                topology = Some(input.parse()?);
                input.parse::<Token![,]>()?;
                continue;
            }
            let value: Expr = input.parse()?;
            match key.to_string().as_str() {
                "ranks" => {
                    if ranks.is_some() {
                        push(syn::Error::new(key.span(), "`ranks` is given twice"));
                    }
                    if let Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n),
                        ..
                    }) = &value
                    {
                        if n.base10_parse::<u64>().ok() == Some(0) {
                            push(syn::Error::new(
                                n.span(),
                                "`ranks` must be at least 1, got 0",
                            ));
                        }
                    }
                    ranks = Some(value);
                }
                other => push(syn::Error::new(
                    key.span(),
                    format!("unknown key `{other}`: {KEYS}"),
                )),
            }
            input.parse::<Token![,]>()?;
        }
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                "expected `spmd!(ranks = N, |world| { … })`: the closure is missing",
            ));
        }
        // The closure is taken apart by hand: its body may hold `on …` clauses, which are not
        // Rust syntax until `on_clause` has rewritten them.
        let capture: Option<Token![move]> = input.parse()?;
        let or1: Token![|] = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a closure with one parameter, the communicator: `|world| { … }`",
            )
        })?;
        let mut params = Punctuated::<Pat, Token![,]>::new();
        while !input.peek(Token![|]) {
            let pat = Pat::parse_single(input)?;
            params.push_value(if input.peek(Token![:]) {
                Pat::Type(syn::PatType {
                    attrs: Vec::new(),
                    pat: Box::new(pat),
                    colon_token: input.parse()?,
                    ty: input.parse()?,
                })
            } else {
                pat
            });
            if input.peek(Token![|]) {
                break;
            }
            params.push_punct(input.parse()?);
        }
        input.parse::<Token![|]>()?;
        let body: TokenStream = input.parse()?;
        let (comm, comm_ty) = match comm_param(&or1, &params) {
            Ok(c) => c,
            Err(e) => {
                push(e);
                (Ident::new("world", Span::call_site()), None)
            }
        };
        let launch = match (topology, ranks) {
            (Some(ty), ranks) => Some(Launch::Topology {
                ty: Box::new(ty),
                ranks,
            }),
            (None, Some(ranks)) => Some(Launch::Ranks(ranks)),
            (None, None) => {
                push(syn::Error::new(
                    or1.span(),
                    format!("missing `ranks`: {KEYS} before the closure"),
                ));
                None
            }
        };
        if let Some(e) = errors {
            return Err(e);
        }
        Ok(Spmd {
            launch: launch.expect("an error was reported above if it is missing"),
            capture,
            comm,
            comm_ty,
            body,
        })
    }
}

/// The closure's one parameter: a name, `_`, or a name with a type.
fn comm_param(
    or1: &Token![|],
    params: &Punctuated<Pat, Token![,]>,
) -> syn::Result<(Ident, Option<Box<syn::Type>>)> {
    if params.len() != 1 {
        let span = if params.is_empty() {
            or1.span()
        } else {
            params.span()
        };
        return Err(syn::Error::new(
            span,
            format!(
                "the closure takes exactly one parameter, the communicator (`|world| …`), but has {}",
                params.len()
            ),
        ));
    }
    let (pat, ty) = match &params[0] {
        Pat::Type(t) => (&*t.pat, Some(t.ty.clone())),
        p => (p, None),
    };
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Ok((p.ident.clone(), ty)),
        Pat::Wild(w) => Ok((Ident::new("__rpar_comm", w.span()), ty)),
        other => Err(syn::Error::new(
            other.span(),
            "the closure's parameter must be a plain name for the communicator, like `world`",
        )),
    }
}
