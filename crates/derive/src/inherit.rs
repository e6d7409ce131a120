//! Interface inheritance across macro calls. A proc macro sees one item,
//! so `#[floe::interface] trait Derived: Base` cannot read `Base`'s
//! operations. Every `#[floe::interface]` therefore also emits, next to
//! its trait (the "callback macro" trick):
//!
//! - a hidden `macro_rules!` named like the trait (macros have their own
//!   namespace, so `use m::Base` imports both) that appends the
//!   interface's description — its operations as written, its type id,
//!   Slice module and bases, and those of all its bases — to the tokens
//!   it is called with and passes them to `floe::__interface_inherit!`;
//! - a hidden module `__floe_iface_<name>` re-exporting what the trait's
//!   module sees (`pub use super::*`), through which the derived
//!   interface names the types of the base's operations.
//!
//! The derived trait's expansion calls its first base's macro with its
//! own tokens; [`callback`] collects the description and calls the next
//! base's macro, and after the last one expands the derived interface
//! with the bases' operations in its model (see `ast::from_trait`).
//! Limitation: a base is named by the path the derived trait writes, so
//! its module must be reachable that way (no renaming `use ... as`), and
//! the base's operations may only name types that are visible from the
//! derived trait's module too.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::parse::{ParseStream, Parser};
use syn::{braced, bracketed, parenthesized, LitStr, Token};

/// A base interface as the derived interface's expansion sees it.
pub struct BaseEntry {
    /// The trait, from the module of the macro holding the entry.
    pub path: syn::Path,
    /// The trait's Rust (and Slice) name.
    pub name: String,
    /// Its type id (`::Demo::Base`).
    pub type_id: String,
    /// Its Slice module, scoped (`::Demo`).
    pub module: String,
    /// The type ids of its direct bases.
    pub bases: Vec<String>,
    /// Its operations, as written.
    pub items: Vec<syn::TraitItem>,
}

/// `__floe_iface_<name>` (snake case, as the generator names modules):
/// the module re-exporting an interface's scope.
pub fn hidden_ident(name: &str) -> syn::Ident {
    format_ident!("__floe_iface_{}", floe_idl::ident::to_snake(name))
}

impl BaseEntry {
    /// The path to the `__floe_iface_` module next to the trait.
    pub fn hidden_module(&self) -> syn::Path {
        let mut p = self.path.clone();
        if let Some(l) = p.segments.last_mut() {
            *l = syn::PathSegment::from(hidden_ident(&self.name));
        }
        p
    }

    fn tokens(&self) -> TokenStream {
        let BaseEntry {
            path,
            name,
            type_id,
            module,
            bases,
            items,
        } = self;
        quote!({ (#path) #name #type_id #module [#(#bases),*] { #(#items)* } })
    }

    fn parse(input: ParseStream) -> syn::Result<Self> {
        let body;
        braced!(body in input);
        let p;
        parenthesized!(p in body);
        let path: syn::Path = p.parse()?;
        let name: LitStr = body.parse()?;
        let type_id: LitStr = body.parse()?;
        let module: LitStr = body.parse()?;
        let b;
        bracketed!(b in body);
        let bases = b.parse_terminated(<LitStr as syn::parse::Parse>::parse, Token![,])?;
        let i;
        braced!(i in body);
        let mut items = Vec::new();
        while !i.is_empty() {
            items.push(i.parse()?);
        }
        Ok(BaseEntry {
            path,
            name: name.value(),
            type_id: type_id.value(),
            module: module.value(),
            bases: bases.iter().map(LitStr::value).collect(),
            items,
        })
    }
}

fn parse_entries(input: ParseStream) -> syn::Result<Vec<BaseEntry>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        out.push(BaseEntry::parse(input)?);
    }
    Ok(out)
}

/// The base interfaces a trait names as supertraits (besides `Send`,
/// `Sync`), if all are plain relative paths; `None` leaves the errors to
/// `ast::from_trait`.
pub fn base_paths(item: &syn::ItemTrait) -> Option<Vec<syn::Path>> {
    let mut out = Vec::new();
    for bound in &item.supertraits {
        let syn::TypeParamBound::Trait(t) = bound else {
            continue;
        };
        let p = &t.path;
        let last = p.segments.last()?.ident.to_string();
        if matches!(last.as_str(), "Send" | "Sync") {
            continue;
        }
        let plain = p.leading_colon.is_none()
            && t.lifetimes.is_none()
            && matches!(t.modifier, syn::TraitBoundModifier::None)
            && p.segments.iter().all(|s| {
                s.arguments.is_none()
                    && !matches!(s.ident.to_string().as_str(), "crate" | "self" | "super")
            });
        if !plain {
            return None;
        }
        out.push(p.clone());
    }
    Some(out)
}

/// Calls the first base's macro: the start of the chain for a derived
/// interface.
pub fn start(args: TokenStream, item: &syn::ItemTrait, mut bases: Vec<syn::Path>) -> TokenStream {
    let first = bases.remove(0);
    quote!(#first! { (#args) { #item } [] [#(#bases),*] (#first) })
}

/// `floe::__interface_inherit!`: one step of the chain (see the module
/// docs).
pub fn callback(input: TokenStream) -> Step {
    let parser = |input: ParseStream| {
        let a;
        parenthesized!(a in input);
        let args: TokenStream = a.parse()?;
        let it;
        braced!(it in input);
        let item: syn::ItemTrait = it.parse()?;
        let e;
        bracketed!(e in input);
        let entries = parse_entries(&e)?;
        let pe;
        bracketed!(pe in input);
        let pending = pe.parse_terminated(syn::Path::parse_mod_style, Token![,])?;
        let v;
        parenthesized!(v in input);
        let via: syn::Path = v.parse()?;
        let r;
        braced!(r in input);
        let received = parse_entries(&r)?;
        Ok((args, item, entries, pending, via, received))
    };
    let (args, item, mut entries, pending, via, received) = match parser.parse2(input) {
        Ok(parsed) => parsed,
        Err(e) => return Step::Next(e.to_compile_error()),
    };
    // The received entries' paths are relative to the base's module:
    // the first is the base itself (reached through `via`), the others
    // are reached through its `__floe_iface_` module.
    let mut received = received.into_iter();
    if let Some(mut own) = received.next() {
        own.path = via.clone();
        let hidden = own.hidden_module();
        let mut all = vec![own];
        for mut e in received {
            let mut p = hidden.clone();
            p.segments.extend(e.path.segments);
            e.path = p;
            all.push(e);
        }
        for e in all {
            if !entries.iter().any(|x| x.type_id == e.type_id) {
                entries.push(e);
            }
        }
    }
    let mut pending: Vec<syn::Path> = pending.into_iter().collect();
    if pending.is_empty() {
        Step::Done {
            args,
            item: Box::new(item),
            bases: entries,
        }
    } else {
        let next = pending.remove(0);
        let entries = entries.iter().map(BaseEntry::tokens);
        Step::Next(quote!(#next! { (#args) { #item } [#(#entries)*] [#(#pending),*] (#next) }))
    }
}

/// What one step of [`callback`] leaves to do.
pub enum Step {
    /// Every base is described: expand the interface with them.
    Done {
        args: TokenStream,
        item: Box<syn::ItemTrait>,
        bases: Vec<BaseEntry>,
    },
    /// The tokens to emit: the next base's macro call (or an error).
    Next(TokenStream),
}

/// The hidden macro and module that let other interfaces derive from
/// this one: `own` first, then every base (paths from this module).
pub fn exports(vis: &syn::Visibility, own: &BaseEntry, bases: &[BaseEntry]) -> TokenStream {
    let name = syn::Ident::new(&own.name, Span::call_site());
    let mac = format_ident!("__floe_iface_{}_bases", own.name);
    let hidden = hidden_ident(&own.name);
    let entries = std::iter::once(own).chain(bases).map(BaseEntry::tokens);
    let use_vis = match vis {
        syn::Visibility::Inherited => TokenStream::new(),
        _ => quote!(pub(crate)),
    };
    let dollar = proc_macro2::Punct::new('$', proc_macro2::Spacing::Alone);
    let doc = format!(
        " Re-exports what the module of interface `{}` sees, for interfaces deriving from it (`#[floe::interface]`).",
        own.name
    );
    quote! {
        #[doc(hidden)]
        #[allow(unused_macros)]
        macro_rules! #mac {
            (#dollar(#dollar state:tt)*) => {
                ::floe::__interface_inherit! { #dollar(#dollar state)* { #(#entries)* } }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        #use_vis use #mac as #name;
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis mod #hidden {
            pub use super::*;
        }
    }
    .into_token_stream()
}
