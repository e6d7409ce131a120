//! A `Rich::SubEcho` servant shared by the tests that serve it (to floe
//! and to Python Ice clients).
#![cfg(not(floe_no_ice_slice))]

use floe::codegen::{Current, DispatchError, OperationMode};
use floe_codegen_tests::rich;

/// A `Rich::SubEcho` servant that checks what it receives.
#[derive(Default)]
pub struct Echo;

impl rich::Echo for Echo {
    async fn put_prims(&self, v: rich::Prims, _: &Current) -> Result<(), DispatchError> {
        if v == rich::Prims::default() {
            Ok(())
        } else {
            Err(DispatchError::unknown("not the default"))
        }
    }
    async fn put_mixed(&self, _: rich::Mixed, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn put_wrappers(
        &self,
        _: rich::inner::WrapperSeq,
        _: &Current,
    ) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn put_shape(
        &self,
        v: Option<floe::codegen::ClassRef<rich::Shape>>,
        _: &Current,
    ) -> Result<(), DispatchError> {
        match v {
            Some(s) if s.ice_id() == "::Rich::Circle" => Ok(()),
            _ => Err(DispatchError::unknown("expected a circle")),
        }
    }
    async fn put_opts(
        &self,
        req: i32,
        i: Option<i32>,
        s: Option<String>,
        p: Option<rich::Point>,
        is: Option<Vec<i32>>,
        c: Option<rich::Color>,
        _: &Current,
    ) -> Result<(), DispatchError> {
        let expected = req == 1
            && i == Some(3)
            && s.as_deref() == Some("x")
            && p == Some(rich::Point { x: 1, y: 2 })
            && is == Some(vec![1, 2])
            && c.is_none();
        if expected {
            Ok(())
        } else {
            Err(DispatchError::unknown("bad optionals"))
        }
    }
    async fn describe(
        &self,
        delay: i32,
        current: &Current,
    ) -> Result<rich::EchoDescribeResult, DispatchError> {
        assert_eq!(current.mode, OperationMode::Nonmutating);
        match delay {
            0 => Ok(("zero".into(), 10, None).into()),
            1 => Ok(rich::EchoDescribeResult {
                return_value: "one".into(),
                code: 11,
                extra: Some("extra".into()),
            }),
            2 => Err(rich::DerivedError {
                base: rich::BaseError {
                    reason: "derived".into(),
                },
                code: 2,
                detail: Some("d".into()),
                ice_sliced_data: None,
            }
            .into()),
            // Not declared by describe: the client sees UnknownUserException.
            _ => Err(rich::OtherError { n: 1 }.into()),
        }
    }
    async fn self_(&self, current: &Current) -> Result<Option<rich::EchoPrx>, DispatchError> {
        Ok(Some(rich::EchoPrx::unchecked_cast(
            current.adapter.create_proxy(current.id.clone()),
        )))
    }
    async fn echo_bytes(
        &self,
        n: i32,
        data: bytes::Bytes,
        _: &Current,
    ) -> Result<bytes::Bytes, DispatchError> {
        assert_eq!(n as usize, data.len());
        Ok(data)
    }
    async fn echo_ints(
        &self,
        n: i32,
        data: Vec<i32>,
        _: &Current,
    ) -> Result<Vec<i32>, DispatchError> {
        assert_eq!(n as usize, data.len());
        Ok(data)
    }
    async fn context_value(&self, key: String, current: &Current) -> Result<String, DispatchError> {
        Ok(current.ctx.get(&key).cloned().unwrap_or_default())
    }
    async fn relay(
        &self,
        e: Option<rich::EchoPrx>,
        o: Option<floe::codegen::Proxy>,
        _: &Current,
    ) -> Result<rich::EchoRelayResult, DispatchError> {
        Ok((e, o).into())
    }
}

impl rich::SubEcho for Echo {
    async fn find(&self, name: String, _: &Current) -> Result<Option<rich::Point>, DispatchError> {
        Ok((name == "here").then_some(rich::Point { x: 5, y: 6 }))
    }
}
