//! [`Encode`] / [`Decode`] for class references, so that class-typed
//! members, parameters, sequence elements, dictionary values and optionals
//! (format `Class`) go through the ordinary codec: `Option<ClassRef<T>>` for
//! a reference to a `T`, `Option<ValuePtr>` for Slice's `Value`.

use super::value::{ClassRef, ValuePtr, ValueType};
use crate::codec::{Decode, Encode, WireType};
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::Result;
use crate::optional::{OptionalFormat, OptionalKind};

impl<T: ValueType> WireType for Option<ClassRef<T>> {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::Class);
}

impl<T: ValueType> Encode for Option<ClassRef<T>> {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_class(self.as_ref())
    }
}

impl<T: ValueType> Decode for Option<ClassRef<T>> {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_class::<T>()
    }
}

impl WireType for Option<ValuePtr> {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::Plain(OptionalFormat::Class);
}

impl Encode for Option<ValuePtr> {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_value(self.as_ref())
    }
}

impl Decode for Option<ValuePtr> {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_value()
    }
}
