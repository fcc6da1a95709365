//! Rewrites `on root { … }` and `on rank(k) { … }` in a token stream into
//! `if comm.rank() == … { … }`, at any depth. An `on` not followed by a name is left alone (it
//! may be a variable called `on`).

use proc_macro2::{Delimiter, Group, Ident, TokenStream, TokenTree};
use quote::quote_spanned;

const SHAPE: &str = "expected `on root { … }` or `on rank(k) { … }`";

/// Rewrites every `on` clause in `tokens`; `comm` is the communicator's name.
pub(crate) fn rewrite(
    tokens: TokenStream,
    comm: &Ident,
    errors: &mut Vec<syn::Error>,
) -> TokenStream {
    let mut out = Vec::new();
    let mut it = tokens.into_iter().peekable();
    while let Some(tt) = it.next() {
        match tt {
            TokenTree::Ident(ref on) if on == "on" => {
                let Some(TokenTree::Ident(which)) = it.peek().cloned() else {
                    out.push(tt);
                    continue;
                };
                it.next();
                let cond = match which.to_string().as_str() {
                    "root" => quote_spanned!(which.span()=> #comm.rank() == 0),
                    "rank" => match it.next() {
                        Some(TokenTree::Group(g))
                            if g.delimiter() == Delimiter::Parenthesis
                                && !g.stream().is_empty() =>
                        {
                            let k = rewrite(g.stream(), comm, errors);
                            quote_spanned!(g.span()=> #comm.rank() == (#k))
                        }
                        other => {
                            let span = other.as_ref().map_or(which.span(), |t| t.span());
                            errors.push(syn::Error::new(
                                span,
                                format!("`on rank` needs the rank in parentheses: {SHAPE}"),
                            ));
                            continue;
                        }
                    },
                    other => {
                        errors.push(syn::Error::new(
                            which.span(),
                            format!("unknown `on {other}`: {SHAPE}"),
                        ));
                        continue;
                    }
                };
                match it.next() {
                    Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => {
                        let inner = rewrite(body.stream(), comm, errors);
                        let mut block = Group::new(Delimiter::Brace, inner);
                        block.set_span(body.span());
                        out.extend(quote_spanned!(on.span()=> if #cond #block));
                    }
                    other => {
                        let span = other.as_ref().map_or(which.span(), |t| t.span());
                        errors.push(syn::Error::new(
                            span,
                            format!("an `on` clause needs a block: {SHAPE}"),
                        ));
                    }
                }
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), rewrite(g.stream(), comm, errors));
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn run(t: TokenStream) -> (String, usize) {
        let mut errors = Vec::new();
        let out = rewrite(
            t,
            &Ident::new("w", proc_macro2::Span::call_site()),
            &mut errors,
        );
        (out.to_string(), errors.len())
    }

    #[test]
    fn rewrites_root_and_rank_at_any_depth() {
        let (out, errs) = run(quote!({ on root { a(); } loop { on rank(1 + 1) { b(); } } }));
        assert_eq!(errs, 0);
        assert!(out.contains("if w . rank () == 0 { a () ; }"), "{out}");
        assert!(
            out.contains("if w . rank () == (1 + 1) { b () ; }"),
            "{out}"
        );
    }

    #[test]
    fn leaves_a_variable_named_on_alone() {
        let (out, errs) = run(quote!(let on = 1; f(on + 1);));
        assert_eq!(errs, 0);
        assert_eq!(out, "let on = 1 ; f (on + 1) ;");
    }

    #[test]
    fn reports_malformed_clauses() {
        assert_eq!(run(quote!(on leader { })).1, 1);
        assert_eq!(run(quote!(on rank { })).1, 1);
        assert_eq!(run(quote!(on root;)).1, 1);
    }
}
