//! Tests of [`super::Request`], [`super::RequestHead`] and
//! [`super::OperationMode`].

use super::*;
use crate::protocol::{Message, VALIDATE_CONNECTION};
use bytes::Bytes;

#[test]
fn encoded_len_is_what_encode_head_writes() {
    let long = "n".repeat(300);
    let ctxs = [
        Context::new(),
        Context::from([("k".to_string(), "v".repeat(254))]),
        (0..300)
            .map(|i| (format!("key{i}"), long.clone()))
            .collect(),
    ];
    let ids = [
        Identity::from_name("a"),
        Identity::new(long.as_str(), "cat"),
        Identity::new("x", long.as_str()),
    ];
    for id in &ids {
        for ctx in &ctxs {
            for facet in ["", "f", long.as_str()] {
                for operation in ["o", long.as_str()] {
                    let head = RequestHead {
                        identity: id,
                        facet,
                        operation,
                        mode: OperationMode::Idempotent,
                        context: ctx,
                    };
                    let mut buf = BytesMut::new();
                    head.encode_head(&mut buf, 7, 6, CompressionStatus::NotSupported);
                    assert_eq!(buf.len(), head.encoded_len());
                    // Into a slice: the same bytes when it fits, nothing
                    // written when it might not.
                    for room in [0, 20, buf.len(), buf.len() + 46, 2048] {
                        let mut out = vec![0xAA; room];
                        let into = head
                            .encode_head_into(&mut out, 7, 6, CompressionStatus::NotSupported)
                            .unwrap();
                        match into {
                            Some(len) => assert_eq!(&out[..len], &buf[..]),
                            None => assert!(out.iter().all(|&b| b == 0xAA)),
                        }
                        let fits = ctx.is_empty() && room >= buf.len() + 46;
                        if fits {
                            assert!(into.is_some(), "{room} bytes for {}", buf.len());
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_request_over_i32_max_bytes_is_refused_not_encoded() {
    let id = Identity::from_name("big");
    let ctx = Context::new();
    let head = RequestHead {
        identity: &id,
        facet: "",
        operation: "put",
        mode: OperationMode::Normal,
        context: &ctx,
    };
    let mut buf = BytesMut::from(&b"before"[..]);
    let err = head
        .try_encode_head(
            &mut buf,
            7,
            i32::MAX as usize,
            CompressionStatus::NotSupported,
        )
        .unwrap_err();
    assert!(matches!(err, Error::MemoryLimit { max, .. } if max == i32::MAX as usize));
    assert_eq!(&buf[..], b"before");
    // The largest parameters that fit still encode.
    let mut small = BytesMut::new();
    head.try_encode_head(&mut small, 7, 0, CompressionStatus::NotSupported)
        .unwrap();
    let fits = i32::MAX as usize - small.len();
    head.try_encode_head(&mut buf, 7, fits, CompressionStatus::NotSupported)
        .unwrap();
    assert_eq!(
        crate::protocol::header::size_field(&buf[6..]),
        i32::MAX as usize
    );
    // The same limits into a slice.
    let mut room = [0; 128];
    let into = |room: &mut [u8], params| {
        head.encode_head_into(room, 7, params, CompressionStatus::NotSupported)
    };
    assert!(matches!(
        into(&mut room, i32::MAX as usize),
        Err(Error::MemoryLimit { .. })
    ));
    assert_eq!(into(&mut room, fits).unwrap(), Some(small.len()));
    assert_eq!(
        crate::protocol::header::size_field(&room),
        i32::MAX as usize
    );
}

/// protocol_basic.txt, first `o()` on `hello`.
const O_REQUEST: &str = "4963655001000100000024000000010000000568656c6c6f0000016f0000060000000101";
/// protocol_basic.txt, `idem(5)`: mode 2, int param 5.
const IDEM_REQUEST: &str =
    "496365500100010000002b000000030000000568656c6c6f000004696465 6d02000a000000010105000000";

fn frame(hex_str: &str) -> Bytes {
    Bytes::from(hex::decode(hex_str.replace(' ', "")).unwrap())
}

#[test]
fn parse_captured_request() {
    let f = frame(O_REQUEST);
    let Message::Request(r) = Message::parse(f.clone()).unwrap().1 else {
        panic!("not a request")
    };
    assert_eq!(r.request_id, 1);
    assert_eq!(r.identity, Identity::from_name("hello"));
    assert_eq!(r.facet, "");
    assert_eq!(r.operation, "o");
    assert_eq!(r.mode(), Some(OperationMode::Normal));
    assert!(r.context.is_empty());
    assert_eq!(r.params, Encapsulation::empty(crate::ENCODING_1_1));
    let mut out = BytesMut::new();
    r.encode(&mut out, CompressionStatus::NotSupported);
    assert_eq!(&out[..], &f[..]);
}

#[test]
fn params_are_slices_of_the_frame() {
    let f = frame(IDEM_REQUEST);
    let Message::Request(r) = Message::parse(f.clone()).unwrap().1 else {
        panic!("not a request")
    };
    assert_eq!(r.mode(), Some(OperationMode::Idempotent));
    assert_eq!(&r.params.data[..], &[5, 0, 0, 0]);
    let base = f.as_ptr() as usize;
    let p = r.params.data.as_ptr() as usize;
    assert!(p >= base && p < base + f.len(), "params were copied");
}

#[test]
fn encode_matches_capture() {
    let id = Identity::from_name("hello");
    let ctx = Context::new();
    let head = RequestHead {
        identity: &id,
        facet: "",
        operation: "idem",
        mode: OperationMode::Idempotent,
        context: &ctx,
    };
    let mut buf = BytesMut::new();
    head.encode(
        &mut buf,
        3,
        &[10, 0, 0, 0, 1, 1, 5, 0, 0, 0],
        CompressionStatus::NotSupported,
    );
    assert_eq!(&buf[..], &frame(IDEM_REQUEST)[..]);
}

#[test]
fn facet_and_context_from_capture() {
    // §2.1 fragments: facet f1, context {a:b, k:v}.
    let id = Identity::from_name("hello");
    let mut ctx = Context::new();
    ctx.insert("k".into(), "v".into());
    ctx.insert("a".into(), "b".into());
    let head = RequestHead {
        identity: &id,
        facet: "f1",
        operation: "o",
        mode: OperationMode::Normal,
        context: &ctx,
    };
    let mut buf = BytesMut::new();
    head.encode_fields(&mut buf);
    assert_eq!(
        hex::encode(&buf),
        "0568656c6c6f0001026631016f0002016101620 16b0176".replace(' ', "")
    );
    let mut dec = Decoder::new(buf.freeze().chain_params());
    let r = Request::decode_fields(&mut dec, 0).unwrap();
    assert_eq!(r.facet, "f1");
    assert_eq!(r.context.get("k").map(String::as_str), Some("v"));
}

trait ChainParams {
    fn chain_params(self) -> Bytes;
}
impl ChainParams for Bytes {
    fn chain_params(self) -> Bytes {
        let mut v = self.to_vec();
        v.extend_from_slice(&[6, 0, 0, 0, 1, 1]);
        Bytes::from(v)
    }
}

#[test]
fn truncated_fields_and_bad_facets_fail() {
    let f = frame(O_REQUEST);
    for cut in 15..f.len() {
        let mut v = f[..cut].to_vec();
        v[10..14].copy_from_slice(&(cut as i32).to_le_bytes());
        assert!(Message::parse(Bytes::from(v)).is_err(), "cut at {cut}");
    }
    // Two facets: rejected.
    let mut dec = Decoder::new(Bytes::from_static(b"\x01a\x00\x02\x01x\x01y\x01o\x00\x00"));
    assert!(Request::decode_fields(&mut dec, 0).is_err());
    // A params size larger than the frame.
    let mut v = f.to_vec();
    v[30] = 0x60;
    assert!(Message::parse(Bytes::from(v)).is_err());
    // And the validate frame is not a request.
    assert!(matches!(
        Message::parse(Bytes::from_static(&VALIDATE_CONNECTION))
            .unwrap()
            .1,
        Message::ValidateConnection
    ));
}
