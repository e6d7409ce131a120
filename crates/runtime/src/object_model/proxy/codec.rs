//! A proxy's side of encoding: its parameters encapsulations and the
//! decoders of its replies and user exceptions, in the proxy's encoding
//! and class format.

use bytes::Bytes;
use floe_wire::{Encapsulation, ENCODING_1_1};

use super::Proxy;
use crate::encapsulation::encode_encapsulation;
use crate::error::Error;

impl Proxy {
    /// Encodes a parameters encapsulation in this proxy's encoding.
    ///
    /// The buffer starts with the size of the proxy's previous parameters
    /// (see `ParamsSize`), so a request of the same shape as the last one
    /// is encoded without growing (and copying) its buffer.
    pub fn encode_params(&self, write: impl FnOnce(&mut floe_wire::Encoder)) -> Bytes {
        let size = &self.inner.params_size;
        let capacity = size.capacity();
        let format = self.inner.class_format;
        size.record(
            encode_encapsulation(self.inner.encoding, capacity, |enc| {
                enc.set_class_format(format);
                write(enc)
            }),
            capacity,
        )
    }

    /// A decoder for a results (or user exception) encapsulation received
    /// by this proxy, configured by its communicator
    /// ([`crate::Communicator::configure_decoder`]: live proxies, value
    /// factories, `Ice.AcceptClassCycles`, `Ice.ClassGraphDepthMax`,
    /// `Floe.ClassGraphMemoryFactor`) (generated
    /// code uses it for operations whose results may hold proxies or
    /// classes; the others skip the upgrade of the weak communicator
    /// reference).
    ///
    /// # Errors
    ///
    /// [`floe_wire::Error::UnsupportedEncoding`] for an encapsulation
    /// neither 1.0 nor 1.1.
    pub fn reply_decoder(&self, encaps: Encapsulation) -> floe_wire::Result<floe_wire::Decoder> {
        let mut dec = floe_wire::Decoder::from_encapsulation(encaps)?;
        if let Some(inner) = self.inner.communicator.upgrade() {
            crate::Communicator { inner }.configure_decoder(&mut dec);
        }
        Ok(dec)
    }

    /// The error a call through this proxy returns for a user-exception
    /// reply: `encaps` decoded as [`Proxy::reply_decoder`] does (with the
    /// class factories `values` gives, for exceptions that hold classes),
    /// then
    /// [`user_exception_error`](crate::user_exception_error) with `known`
    /// and `declared`. What generated proxies call.
    pub fn user_exception_error(
        &self,
        encaps: Encapsulation,
        known: &floe_wire::UserExceptionRegistry,
        values: Option<fn() -> std::sync::Arc<floe_wire::class::ValueFactoryRegistry>>,
        declared: &[&str],
    ) -> Error {
        match self.reply_decoder(encaps) {
            Ok(mut dec) => {
                if let Some(values) = values {
                    dec.set_value_factories(values());
                }
                crate::user_exception_error(&mut dec, known, declared)
            }
            Err(e) => e.into(),
        }
    }

    /// Encodes the start of a parameters encapsulation's data (no header)
    /// in this proxy's encoding, for [`Proxy::invoke_with_payload`].
    pub fn encode_params_prefix(&self, write: impl FnOnce(&mut floe_wire::Encoder)) -> Bytes {
        let mut enc = floe_wire::Encoder::with_buffer(
            bytes::BytesMut::with_capacity(32),
            self.inner.encoding,
        );
        enc.set_class_format(self.inner.class_format);
        write(&mut enc);
        enc.finish()
    }

    /// An empty parameters encapsulation in this proxy's encoding.
    pub fn empty_params(&self) -> Bytes {
        if self.inner.encoding == ENCODING_1_1 {
            Bytes::from_static(&[6, 0, 0, 0, 1, 1])
        } else {
            Bytes::from_static(&[6, 0, 0, 0, 1, 0])
        }
    }
}
