//! [`Encode`] and [`Decode`] for sequences (`[T]`, `Vec<T>`) and
//! dictionaries (`BTreeMap`, `HashMap`).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};

use super::{prealloc_64k, seq_optional_kind, Decode, Encode, WireType};
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::Result;
use crate::optional::OptionalKind;

impl<T: WireType> WireType for [T] {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = seq_optional_kind(T::FIXED_SIZE);
}
impl<T: Encode> Encode for [T] {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_seq(self)
    }
}
impl<T: WireType> WireType for Vec<T> {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = seq_optional_kind(T::FIXED_SIZE);
}
impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_seq(self)
    }
}
impl<T: Decode> Decode for Vec<T> {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        dec.read_seq()
    }
}

const fn dict_optional_kind(k: Option<usize>, v: Option<usize>) -> OptionalKind {
    match (k, v) {
        (Some(_), Some(_)) => OptionalKind::VSizeLength,
        _ => OptionalKind::FSizeLength,
    }
}

impl<K: WireType, V: WireType> WireType for BTreeMap<K, V> {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = dict_optional_kind(K::FIXED_SIZE, V::FIXED_SIZE);
}
impl<K: Encode, V: Encode> Encode for BTreeMap<K, V> {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_size(self.len());
        for (k, v) in self {
            k.encode(enc);
            v.encode(enc);
        }
    }
}
impl<K: Decode + Ord, V: Decode> Decode for BTreeMap<K, V> {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let n = dec.read_count(K::MIN_WIRE_SIZE.max(1) + V::MIN_WIRE_SIZE.max(1))?;
        let mut map = BTreeMap::new();
        for _ in 0..n {
            let k = K::decode(dec)?;
            let v = V::decode(dec)?;
            map.insert(k, v);
        }
        Ok(map)
    }
}

impl<K: WireType, V: WireType, S> WireType for HashMap<K, V, S> {
    const MIN_WIRE_SIZE: usize = 1;
    const OPTIONAL_KIND: OptionalKind = dict_optional_kind(K::FIXED_SIZE, V::FIXED_SIZE);
}
impl<K: Encode, V: Encode, S> Encode for HashMap<K, V, S> {
    fn encode(&self, enc: &mut Encoder) {
        enc.write_size(self.len());
        for (k, v) in self {
            k.encode(enc);
            v.encode(enc);
        }
    }
}
impl<K: Decode + Eq + Hash, V: Decode, S: BuildHasher + Default> Decode for HashMap<K, V, S> {
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let n = dec.read_count(K::MIN_WIRE_SIZE.max(1) + V::MIN_WIRE_SIZE.max(1))?;
        let mut map =
            HashMap::with_capacity_and_hasher(n.min(prealloc_64k::<(K, V)>()), S::default());
        for _ in 0..n {
            let k = K::decode(dec)?;
            let v = V::decode(dec)?;
            map.insert(k, v);
        }
        Ok(map)
    }
}
