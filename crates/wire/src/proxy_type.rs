//! [`ProxyType`]: the Rust types a proxy-typed value (`I*`, `Object*`) can
//! be, and the codec of `Option<P>` for all of them (a proxy that may be
//! null: `00 00` when `None`).
//!
//! floe-wire implements it for [`ProxyData`] (plain data, no communicator
//! needed); floe-runtime for its live `Proxy`, generated code for typed
//! proxies (`HelloPrx`). A live proxy needs a communicator, which the
//! runtime gives decoders as their context ([`Decoder::set_context`]).

use crate::codec::{Decode, Encode, WireType};
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::Result;
use crate::identity::Identity;
use crate::optional::OptionalKind;
use crate::proxy::ProxyData;

/// A non-null proxy as a Rust value; `Option<Self>` is the proxy-typed
/// value on the wire.
pub trait ProxyType: Sized {
    /// Writes the proxy (never the null proxy).
    fn write_proxy(&self, enc: &mut Encoder);

    /// Makes the value from a decoded non-null proxy; `dec` is the decoder
    /// it came from, for its [`Decoder::context`].
    ///
    /// # Errors
    ///
    /// Whatever the implementation needs and lacks (a live proxy without a
    /// communicator in the context is [`crate::Error::Marshal`]).
    fn from_proxy_data(data: ProxyData, dec: &Decoder) -> Result<Self>;
}

impl ProxyType for ProxyData {
    fn write_proxy(&self, enc: &mut Encoder) {
        self.encode(enc)
    }

    fn from_proxy_data(data: ProxyData, _dec: &Decoder) -> Result<Self> {
        Ok(data)
    }
}

/// A proxy that may be null, as every proxy-typed value on the wire.
impl<P: ProxyType> WireType for Option<P> {
    /// The null proxy: `00 00`.
    const MIN_WIRE_SIZE: usize = 2;
    const OPTIONAL_KIND: OptionalKind = OptionalKind::FSizeLength;
}

impl<P: ProxyType> Encode for Option<P> {
    /// Writes the proxy, or `00 00` for `None`.
    fn encode(&self, enc: &mut Encoder) {
        match self {
            Some(p) => p.write_proxy(enc),
            None => enc.write_raw(&[0, 0]),
        }
    }
}

impl<P: ProxyType> Decode for Option<P> {
    /// Reads a proxy; an identity with an empty name and an empty category
    /// is the null proxy and ends it. (Ice 3.7.8 reads an empty name with a
    /// category as a proxy, and so does floe.)
    ///
    /// # Errors
    ///
    /// [`crate::Error::ProxyUnmarshal`] for a mode above 4 or more than one
    /// facet; out-of-bounds and endpoint errors as they come; what
    /// [`ProxyType::from_proxy_data`] returns.
    fn decode(dec: &mut Decoder) -> Result<Self> {
        let identity = Identity::decode(dec).map_err(|e| e.at("Proxy"))?;
        if identity.is_null() {
            return Ok(None);
        }
        let data = ProxyData::decode_after_identity(identity, dec).map_err(|e| e.at("Proxy"))?;
        P::from_proxy_data(data, dec).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use bytes::Bytes;
    use std::sync::Arc;

    /// A live-proxy stand-in: needs a `u32` context.
    #[derive(Debug, PartialEq)]
    struct Live(u32, ProxyData);

    impl ProxyType for Live {
        fn write_proxy(&self, enc: &mut Encoder) {
            self.1.write_proxy(enc)
        }
        fn from_proxy_data(data: ProxyData, dec: &Decoder) -> Result<Self> {
            let n = dec
                .context()
                .and_then(|c| c.downcast_ref::<u32>())
                .ok_or_else(|| Error::marshal("no context"))?;
            Ok(Live(*n, data))
        }
    }

    fn encoded(p: &Option<ProxyData>) -> Bytes {
        let mut enc = Encoder::new();
        enc.write(p);
        enc.finish()
    }

    #[test]
    fn null_needs_no_context_and_live_proxies_do() {
        let null = encoded(&None);
        assert_eq!(Decoder::new(null).read::<Option<Live>>().unwrap(), None);
        let data = ProxyData::new(Identity::from_name("a"));
        let bytes = encoded(&Some(data.clone()));
        assert!(matches!(
            Decoder::new(bytes.clone()).read::<Option<Live>>(),
            Err(Error::Marshal { .. })
        ));
        let mut dec = Decoder::new(bytes.clone());
        dec.set_context(Arc::new(7u32));
        let live = dec.read::<Option<Live>>().unwrap().unwrap();
        assert_eq!(live, Live(7, data));
        assert!(dec.is_empty());
        assert_eq!(encoded(&Some(live.1)), bytes);
    }
}
