//! floe-idl: the Slice compiler (preprocessor, nom grammar, validation) and the
//! interface model shared with `floe-derive`.
#![warn(missing_docs)]

pub mod ast;
pub mod diagnostic;
pub mod ident;
pub mod lexer;
pub mod parse;
pub mod preprocess;
