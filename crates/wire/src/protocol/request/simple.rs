//! [`Request::decode_simple`]: the common request read straight from the
//! frame's bytes, without a [`Decoder`](crate::Decoder).

use bytes::{Buf, Bytes};
use compact_str::CompactString;

use super::Request;
use crate::decoder::Encapsulation;
use crate::identity::Identity;
use crate::{Context, EncodingVersion};

impl Request {
    /// The common request read straight from `body` (everything after the
    /// header): every size in one byte, a default or single facet, no
    /// context, and a parameters encapsulation that ends the message. The
    /// parameters are `body` itself, advanced (no reference count
    /// touched). Anything else is given back, for
    /// [`Request::decode_body`], which decodes every request and reports
    /// every error; what both accept, they decode alike.
    ///
    /// # Errors
    ///
    /// `body`, when it is not such a request.
    pub fn decode_simple(mut body: Bytes) -> std::result::Result<Request, Bytes> {
        let Some(f) = Fields::read(&body) else {
            return Err(body);
        };
        // The strings are made before the body moves on (they borrow it);
        // the request is built in place in the result, not moved again.
        let identity = Identity {
            name: compact(f.name),
            category: compact(f.category),
        };
        let (facet, operation) = (compact(f.facet), compact(f.operation));
        let (request_id, mode_byte, encoding) = (f.request_id, f.mode_byte, f.encoding);
        body.advance(f.params_at);
        Ok(Request {
            request_id,
            identity,
            facet,
            operation,
            mode_byte,
            context: Context::new(),
            params: Encapsulation {
                encoding,
                data: body,
            },
        })
    }
}

/// `s` as a `CompactString`; the empty one (most categories and facets) as
/// a constant, without copying.
#[inline(always)]
fn compact(s: &str) -> CompactString {
    if s.is_empty() {
        CompactString::const_new("")
    } else {
        CompactString::from(s)
    }
}

/// The fields of a simple request, borrowed from its body.
struct Fields<'a> {
    request_id: i32,
    name: &'a str,
    category: &'a str,
    facet: &'a str,
    operation: &'a str,
    mode_byte: u8,
    encoding: EncodingVersion,
    /// Where the parameters' data starts.
    params_at: usize,
}

/// A position in a body being read.
struct Cursor<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let bytes = self.body.get(self.at..)?.first_chunk::<N>()?;
        self.at += N;
        Some(*bytes)
    }

    /// A string whose size fits in one byte (below 255), valid UTF-8.
    fn string(&mut self) -> Option<&'a str> {
        let [n] = self.take::<1>()?;
        if n == 255 {
            return None;
        }
        let end = self.at + usize::from(n);
        let bytes = self.body.get(self.at..end)?;
        self.at = end;
        if bytes.is_ascii() {
            // SAFETY: ASCII bytes are valid UTF-8.
            Some(unsafe { std::str::from_utf8_unchecked(bytes) })
        } else {
            std::str::from_utf8(bytes).ok()
        }
    }
}

impl<'a> Fields<'a> {
    /// `None` for anything but a simple request (see
    /// [`Request::decode_simple`]), valid or not.
    fn read(body: &'a [u8]) -> Option<Fields<'a>> {
        let mut c = Cursor { body, at: 0 };
        let request_id = i32::from_le_bytes(c.take()?);
        let name = c.string()?;
        let category = c.string()?;
        let facet = match c.take()? {
            [0] => "",
            [1] => c.string()?,
            _ => return None,
        };
        let operation = c.string()?;
        let [mode_byte] = c.take()?;
        // An empty context.
        if c.take()? != [0] {
            return None;
        }
        let size = i32::from_le_bytes(c.take()?);
        let [major, minor] = c.take()?;
        // The encapsulation's size counts its own four bytes and the
        // version's two: the rest of the body is its data.
        let data = body.len() - c.at;
        if usize::try_from(size).ok()? != data + 6 {
            return None;
        }
        Some(Fields {
            request_id,
            name,
            category,
            facet,
            operation,
            mode_byte,
            encoding: EncodingVersion { major, minor },
            params_at: c.at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Decoder;
    use proptest::prelude::*;

    /// `decode_simple` against `decode_body`: the same request wherever
    /// the fast path takes one, and the body given back untouched where it
    /// does not.
    fn agree(body: &[u8]) -> bool {
        let general = Request::decode_body(&mut Decoder::new(Bytes::copy_from_slice(body)));
        match Request::decode_simple(Bytes::copy_from_slice(body)) {
            Ok(fast) => {
                assert_eq!(general.ok(), Some(fast));
                true
            }
            Err(back) => {
                assert_eq!(&back[..], body);
                false
            }
        }
    }

    fn string(out: &mut Vec<u8>, s: &[u8]) {
        if s.len() < 255 {
            out.push(s.len() as u8);
        } else {
            out.push(255);
            out.extend_from_slice(&(s.len() as i32).to_le_bytes());
        }
        out.extend_from_slice(s);
    }

    #[test]
    fn captured_request_is_simple() {
        // `o` on identity `hello`, encoding 1.1, no parameters.
        let body =
            hex::decode("01000000 0568656c6c6f 00 00 016f 00 00 060000000101".replace(' ', ""))
                .unwrap();
        assert!(agree(&body));
        let r = Request::decode_simple(Bytes::from(body)).unwrap();
        assert_eq!(r.identity, Identity::from_name("hello"));
        assert_eq!(r.operation, "o");
        assert!(r.params.data.is_empty());
    }

    #[test]
    fn the_rest_goes_to_the_decoder() {
        let simple = |ctx: u8, facets: u8, size: i32, tail: &[u8]| {
            let mut b = 7i32.to_le_bytes().to_vec();
            string(&mut b, b"id");
            string(&mut b, b"");
            b.push(facets);
            for _ in 0..facets {
                string(&mut b, b"f");
            }
            string(&mut b, b"op");
            b.push(0);
            b.push(ctx);
            if ctx == 1 {
                string(&mut b, b"k");
                string(&mut b, b"v");
            }
            b.extend_from_slice(&size.to_le_bytes());
            b.extend_from_slice(&[1, 1]);
            b.extend_from_slice(tail);
            b
        };
        assert!(agree(&simple(0, 0, 8, &[1, 2])));
        assert!(agree(&simple(0, 1, 6, &[])));
        // A context, two facets, a short or long size, a size below 6.
        assert!(!agree(&simple(1, 0, 6, &[])));
        assert!(!agree(&simple(0, 2, 6, &[])));
        assert!(!agree(&simple(0, 0, 7, &[])));
        assert!(!agree(&simple(0, 0, 6, &[9])));
        assert!(!agree(&simple(0, 0, 5, &[])));
        assert!(!agree(&simple(0, 0, -1, &[])));
        // A long name, invalid UTF-8.
        let mut long = 1i32.to_le_bytes().to_vec();
        string(&mut long, &[b'n'; 300]);
        long.extend_from_slice(&[0, 0, 1, b'o', 0, 0, 6, 0, 0, 0, 1, 1]);
        assert!(!agree(&long));
        let mut bad = 1i32.to_le_bytes().to_vec();
        string(&mut bad, &[0xff, 0xfe]);
        bad.extend_from_slice(&[0, 0, 1, b'o', 0, 0, 6, 0, 0, 0, 1, 1]);
        assert!(!agree(&bad));
        assert!(!agree(&[]));
    }

    proptest! {
        #[test]
        fn decode_simple_agrees_on_any_body(
            id in any::<i32>(),
            strings in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(b'a'..=b'c', 0..4),
                    proptest::collection::vec(any::<u8>(), 0..3),
                ],
                4,
            ),
            facets in 0u8..3,
            mode in any::<u8>(),
            ctx in 0u8..2,
            size_delta in -7i32..3,
            data in proptest::collection::vec(any::<u8>(), 0..6),
            cut in 0usize..40,
        ) {
            let mut b = id.to_le_bytes().to_vec();
            string(&mut b, &strings[0]);
            string(&mut b, &strings[1]);
            b.push(facets);
            for _ in 0..facets {
                string(&mut b, &strings[2]);
            }
            string(&mut b, &strings[3]);
            b.push(mode);
            b.push(ctx);
            if ctx == 1 {
                string(&mut b, b"k");
                string(&mut b, b"v");
            }
            b.extend_from_slice(&(data.len() as i32 + 6 + size_delta).to_le_bytes());
            b.extend_from_slice(&[1, 1]);
            b.extend_from_slice(&data);
            agree(&b);
            // Cut short anywhere.
            let cut = cut.min(b.len());
            agree(&b[..b.len() - cut]);
        }
    }
}
