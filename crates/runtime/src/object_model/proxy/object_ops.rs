//! The operations every Ice object has (`ice_ping`, `ice_isA`, `ice_id`,
//! `ice_ids`), and the flushing of a proxy's batched requests.

use floe_wire::protocol::OperationMode;

use super::Proxy;
use crate::error::{Error, Result};

impl Proxy {
    /// `ice_ping`: checks that the object exists.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectNotExist`] and friends, connection errors.
    pub async fn ice_ping(&self) -> Result<()> {
        self.invoke("ice_ping", OperationMode::Nonmutating, self.empty_params())
            .await?
            .into_ok()
            .map(drop)
    }

    /// `ice_isA`: whether the object implements `type_id`.
    ///
    /// # Errors
    ///
    /// As [`Proxy::ice_ping`].
    pub async fn ice_is_a(&self, type_id: &str) -> Result<bool> {
        let params = self.encode_params(|e| e.write_string(type_id));
        let r = self
            .twoway_for_builtin()?
            .invoke("ice_isA", OperationMode::Nonmutating, params)
            .await?
            .into_ok()?;
        let mut dec = floe_wire::Decoder::from_encapsulation(r)?;
        Ok(dec.read_bool()?)
    }

    /// `ice_id`: the most-derived type id.
    ///
    /// # Errors
    ///
    /// As [`Proxy::ice_ping`].
    pub async fn ice_id(&self) -> Result<String> {
        let r = self
            .twoway_for_builtin()?
            .invoke("ice_id", OperationMode::Nonmutating, self.empty_params())
            .await?
            .into_ok()?;
        let mut dec = floe_wire::Decoder::from_encapsulation(r)?;
        Ok(dec.read_string()?)
    }

    /// `ice_ids`: all type ids, sorted.
    ///
    /// # Errors
    ///
    /// As [`Proxy::ice_ping`].
    pub async fn ice_ids(&self) -> Result<Vec<String>> {
        let r = self
            .twoway_for_builtin()?
            .invoke("ice_ids", OperationMode::Nonmutating, self.empty_params())
            .await?
            .into_ok()?;
        let mut dec = floe_wire::Decoder::from_encapsulation(r)?;
        Ok(dec.read_seq::<String>()?)
    }

    fn twoway_for_builtin(&self) -> Result<Proxy> {
        if self.inner.mode.is_twoway() {
            Ok(self.clone())
        } else {
            Err(Error::TwowayOnly)
        }
    }

    /// Sends the batch requests queued on this proxy's connection.
    ///
    /// # Errors
    ///
    /// Connection errors.
    pub async fn ice_flush_batch_requests(&self) -> Result<()> {
        if self.inner.mode.is_datagram() {
            let comm = self.communicator()?;
            return comm.inner.datagrams.flush().await;
        }
        let conn = self.ice_get_connection().await?;
        conn.flush_batch_requests()
    }
}
