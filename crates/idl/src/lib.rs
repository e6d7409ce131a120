//! floe-idl: the Slice compiler (preprocessor, nom grammar, validation) and the
//! interface model shared with `floe-derive`.
#![warn(missing_docs)]
