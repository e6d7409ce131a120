//! The decoder's primitive reads.

use super::*;

fn dec(bytes: &[u8]) -> Decoder {
    Decoder::new(Bytes::copy_from_slice(bytes))
}

#[test]
fn read_string_ascii_and_utf8() {
    assert_eq!(dec(b"\x05hello").read_string().unwrap(), "hello");
    assert_eq!(dec(b"\x00").read_string().unwrap(), "");
    let mut d = dec("\x06h\u{e9}llo".as_bytes());
    assert_eq!(d.read_string().unwrap(), "h\u{e9}llo");
    assert!(d.read_u8().is_err());
}

#[test]
fn read_string_rejects_invalid_utf8_without_consuming() {
    let mut d = dec(b"\x03a\xffb");
    let e = d.read_string().unwrap_err();
    assert!(e.to_string().contains("not valid UTF-8"), "{e}");
    // A truncated string is an error too, not a panic.
    assert!(dec(b"\x09abc").read_string().is_err());
}
