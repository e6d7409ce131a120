//! Interfaces: the typed proxy, the servant trait and the dispatcher.

use proc_macro2::TokenStream;

use super::Gen;
use crate::model::{Definition, Interface};

impl Gen<'_> {
    pub(crate) fn interface_def(&self, _def: &Definition, _i: &Interface) -> TokenStream {
        TokenStream::new()
    }
}
