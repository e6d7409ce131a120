//! [`Ctxt`]: the errors of one macro expansion, collected so that all
//! are reported at once.

use proc_macro2::Span;

/// Error collector: every error is kept and reported together.
#[derive(Default)]
pub struct Ctxt {
    errors: Option<syn::Error>,
}

impl Ctxt {
    /// Records an error at `span`.
    pub fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// Records `err`.
    pub fn push(&mut self, err: syn::Error) {
        match &mut self.errors {
            Some(e) => e.combine(err),
            None => self.errors = Some(err),
        }
    }

    /// `Err` with every error, if any.
    pub fn check(self) -> syn::Result<()> {
        match self.errors {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
