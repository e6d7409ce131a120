//! Generated proxies call generated dispatchers over a real floe-runtime
//! connection on 127.0.0.1: parameters, out-parameters, optionals, user
//! exceptions (declared and not), inherited operations, `checked_cast`,
//! the operation mode check, and Bench's throughput operations.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use floe::codegen::{Current, DispatchError};
use floe::runtime::Communicator;
use floe::Identity;
use floe_codegen_tests::bench;

mod common;

struct Throughput {
    calls: AtomicUsize,
}

impl bench::Throughput for Throughput {
    async fn send_byte_seq(&self, seq: Bytes, _: &Current) -> Result<(), DispatchError> {
        self.calls.fetch_add(seq.len(), Ordering::SeqCst);
        Ok(())
    }
    async fn recv_byte_seq(&self, size: i32, _: &Current) -> Result<Bytes, DispatchError> {
        Ok(Bytes::from(vec![7u8; size.max(0) as usize]))
    }
    async fn send_fixed_seq(&self, seq: bench::FixedSeq, _: &Current) -> Result<(), DispatchError> {
        self.calls.fetch_add(seq.len(), Ordering::SeqCst);
        Ok(())
    }
    async fn recv_fixed_seq(
        &self,
        count: i32,
        _: &Current,
    ) -> Result<bench::FixedSeq, DispatchError> {
        Ok((0..count)
            .map(|i| bench::Fixed { i, j: -i, d: 0.5 })
            .collect())
    }
    async fn send_string_double_seq(
        &self,
        seq: bench::StringDoubleSeq,
        _: &Current,
    ) -> Result<(), DispatchError> {
        self.calls.fetch_add(seq.len(), Ordering::SeqCst);
        Ok(())
    }
    async fn recv_string_double_seq(
        &self,
        count: i32,
        _: &Current,
    ) -> Result<bench::StringDoubleSeq, DispatchError> {
        Ok((0..count)
            .map(|i| bench::StringDouble {
                s: i.to_string(),
                d: 1.0,
            })
            .collect())
    }
    async fn shutdown(&self, _: &Current) -> Result<(), DispatchError> {
        Ok(())
    }
}

#[tokio::test]
async fn bench_throughput() {
    let communicator = Communicator::new();
    let adapter = communicator
        .create_object_adapter_with_endpoints("T", "tcp -h 127.0.0.1 -p 0")
        .await
        .unwrap();
    let servant = bench::ThroughputDispatcher::new(Throughput {
        calls: AtomicUsize::new(0),
    });
    let proxy = adapter
        .add(Identity::from_name("t"), servant.clone())
        .unwrap();
    adapter.activate();
    let t = bench::ThroughputPrx::checked_cast(proxy.clone())
        .await
        .unwrap()
        .expect("implements Throughput");
    assert!(bench::LatencyPrx::checked_cast(proxy)
        .await
        .unwrap()
        .is_none());
    t.send_byte_seq(Bytes::from_static(&[1, 2, 3]))
        .await
        .unwrap();
    t.send_byte_seq(vec![0u8; 100_000]).await.unwrap();
    assert_eq!(
        t.recv_byte_seq(1000).await.unwrap(),
        Bytes::from(vec![7u8; 1000])
    );
    // Above 16 KB the result is sent beside the reply head, not copied.
    assert_eq!(
        t.recv_byte_seq(300_000).await.unwrap(),
        Bytes::from(vec![7u8; 300_000])
    );
    let fixed = vec![bench::Fixed { i: 1, j: 2, d: 3.0 }; 10];
    t.send_fixed_seq(&fixed).await.unwrap();
    let back = t.recv_fixed_seq(50_000).await.unwrap();
    assert_eq!(back.len(), 50_000);
    assert_eq!(
        back[3],
        bench::Fixed {
            i: 3,
            j: -3,
            d: 0.5
        }
    );
    let sd = t.recv_string_double_seq(3).await.unwrap();
    assert_eq!(sd[2].s, "2");
    t.send_string_double_seq(&sd).await.unwrap();
    assert_eq!(servant.0.calls.load(Ordering::SeqCst), 3 + 100_000 + 10 + 3);
    // A value-returning operation on a oneway proxy is refused locally.
    let oneway = t.ice_oneway();
    assert!(matches!(
        oneway.recv_byte_seq(1).await,
        Err(floe::codegen::Error::TwowayOnly)
    ));
    oneway.shutdown().await.unwrap();
    communicator.destroy().await;
}

#[cfg(not(floe_no_ice_slice))]
mod rich_loopback {
    use super::*;
    use floe::codegen::OperationMode;
    use floe_codegen_tests::rich;

    use crate::common::Echo;

    #[tokio::test]
    async fn rich_echo() {
        let communicator = Communicator::new();
        let adapter = communicator
            .create_object_adapter_with_endpoints("R", "tcp -h 127.0.0.1 -p 0")
            .await
            .unwrap();
        let proxy = adapter
            .add(
                Identity::from_name("echo"),
                rich::SubEchoDispatcher::new(Echo),
            )
            .unwrap();
        adapter.activate();
        let sub = rich::SubEchoPrx::checked_cast(proxy.clone())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            sub.ice_ids().await.unwrap(),
            ["::Ice::Object", "::Rich::Echo", "::Rich::SubEcho"]
        );
        assert_eq!(
            sub.find("here").await.unwrap(),
            Some(rich::Point { x: 5, y: 6 })
        );
        assert_eq!(sub.find("there").await.unwrap(), None);
        let echo: rich::EchoPrx = sub.clone().into();
        echo.put_prims(&rich::Prims::default()).await.unwrap();
        echo.put_mixed(&rich::Mixed::default()).await.unwrap();
        echo.put_wrappers(&[]).await.unwrap();
        let circle = floe::codegen::ClassRef::new(rich::Circle::default());
        echo.put_shape(&Some(circle.clone().upcast()))
            .await
            .unwrap();
        echo.put_opts(
            1,
            Some(3),
            Some("x"),
            Some(&rich::Point { x: 1, y: 2 }),
            Some(&[1, 2]),
            None,
        )
        .await
        .unwrap();
        assert!(echo
            .put_opts(1, None, None, None, None, None)
            .await
            .is_err());
        assert_eq!(
            echo.describe(0).await.unwrap(),
            rich::EchoDescribeResult {
                return_value: "zero".to_owned(),
                code: 10,
                extra: None
            }
        );
        assert_eq!(
            sub.describe(1).await.unwrap(),
            rich::EchoDescribeResult {
                return_value: "one".to_owned(),
                code: 11,
                extra: Some("extra".to_owned())
            }
        );
        let ex = echo.describe(2).await.unwrap_err();
        assert_eq!(ex.ice_name(), "::Rich::DerivedError");
        assert_eq!(ex.user_exception::<rich::DerivedError>().unwrap().code, 2);
        let err = echo.describe(3).await.unwrap_err();
        assert!(
            matches!(&err, floe::codegen::Error::UnknownUserException(id) if id == "::Rich::OtherError"),
            "{err:?}"
        );
        // Proxies decode as live typed proxies, both ways.
        let me = echo.self_().await.unwrap().unwrap();
        assert_eq!(me.identity(), &Identity::from_name("echo"));
        assert_eq!(me.describe(0).await.unwrap().code, 10);
        let (r, back) = echo
            .relay(&Some(me.clone()), &Some(proxy.clone()))
            .await
            .unwrap()
            .into();
        assert_eq!(r.as_ref(), Some(&me));
        assert_eq!(back.as_ref(), Some(&proxy));
        r.unwrap().ice_ping().await.unwrap();
        let nothing = echo.relay(&None, &None).await.unwrap();
        assert_eq!((nothing.return_value, nothing.back), (None, None));
        // A trailing byte sequence, small and large, twoway and oneway.
        for n in [0usize, 5, 100_000] {
            let data = Bytes::from((0..n).map(|i| i as u8).collect::<Vec<u8>>());
            assert_eq!(echo.echo_bytes(n as i32, data.clone()).await.unwrap(), data);
        }
        // A trailing number sequence: small (copied into the frame) and
        // large (written from the caller's slice).
        for n in [0usize, 3, 250_000] {
            let data: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(-7919)).collect();
            assert_eq!(echo.echo_ints(n as i32, &data).await.unwrap(), data);
        }
        // Request contexts: per call, per proxy, and the call's wins.
        let ctx = floe::codegen::Context::from([("k".to_owned(), "v".to_owned())]);
        assert_eq!(
            echo.context_value_with_context("k", &ctx).await.unwrap(),
            "v"
        );
        assert_eq!(echo.context_value("k").await.unwrap(), "");
        let other = floe::codegen::Context::from([("k".to_owned(), "w".to_owned())]);
        let with_ctx = echo.ice_context(other);
        assert_eq!(with_ctx.context_value("k").await.unwrap(), "w");
        assert_eq!(
            with_ctx
                .context_value_with_context("k", &ctx)
                .await
                .unwrap(),
            "v"
        );
        // The dispatcher checks the mode: describe is idempotent, so a
        // Normal-mode request is refused with a MarshalException (status 5).
        let err = proxy
            .invoke(
                "describe",
                OperationMode::Normal,
                proxy.encode_params(|e| e.write_i32(0)),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&err, floe::codegen::Error::UnknownLocalException(t) if t.contains("MarshalException")),
            "{err:?}"
        );
        // ...and putPrims (plain) refuses Idempotent.
        let err = proxy
            .invoke(
                "putPrims",
                OperationMode::Idempotent,
                proxy.encode_params(|e| e.write(&rich::Prims::default())),
            )
            .await
            .unwrap_err();
        assert!(matches!(
            err,
            floe::codegen::Error::UnknownLocalException(_)
        ));
        communicator.destroy().await;
    }
}
