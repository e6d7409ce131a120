//! The base64 codec of opaque endpoints' `-v` option, with Ice's quirks:
//! the encoder breaks lines with `\r\n` every 76 characters, and the decoder
//! is lenient (characters outside the alphabet are dropped, a short final
//! group is padded with `A`s, and `=` counts as the value 63 when it does not
//! end a group).

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Whether `c` may appear in base64 text (the alphabet and `=`).
pub fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'='
}

/// Encodes `bytes` as Ice prints them: standard alphabet, `=` padding,
/// `\r\n` after every 76 characters when more follow.
///
/// ```
/// use floe_wire::base64;
/// assert_eq!(base64::encode(&[1, 2, 3, 4]), "AQIDBA==");
/// assert_eq!(base64::encode(&[]), "");
/// ```
pub fn encode(bytes: &[u8]) -> String {
    let mut plain = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b0 = chunk[0];
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        plain.push(ALPHABET[usize::from(b0 >> 2)]);
        plain.push(ALPHABET[usize::from(((b0 & 0x03) << 4) | (b1 >> 4))]);
        plain.push(if chunk.len() > 1 {
            ALPHABET[usize::from(((b1 & 0x0f) << 2) | (b2 >> 6))]
        } else {
            b'='
        });
        plain.push(if chunk.len() > 2 {
            ALPHABET[usize::from(b2 & 0x3f)]
        } else {
            b'='
        });
    }
    let mut out = String::with_capacity(plain.len() + plain.len() / 76 * 2);
    let mut lines = plain.chunks(76).peekable();
    while let Some(line) = lines.next() {
        // Every byte comes from ALPHABET or is '=': ASCII.
        out.extend(line.iter().map(|&b| b as char));
        if lines.peek().is_some() {
            out.push_str("\r\n");
        }
    }
    out
}

/// Decodes base64 text the way Ice does (see the module docs); never fails.
///
/// ```
/// use floe_wire::base64;
/// assert_eq!(base64::decode("AQIDBA=="), vec![1, 2, 3, 4]);
/// assert_eq!(base64::decode("AAE"), vec![0, 1, 0]);
/// ```
pub fn decode(text: &str) -> Vec<u8> {
    let chars: Vec<u8> = text.bytes().filter(|&c| is_base64(c)).collect();
    let mut out = Vec::with_capacity(chars.len() * 3 / 4 + 1);
    for group in chars.chunks(4) {
        let c = |i: usize| group.get(i).copied().unwrap_or(b'A');
        let (c1, c2, c3, c4) = (c(0), c(1), c(2), c(3));
        let (v1, v2, v3, v4) = (value(c1), value(c2), value(c3), value(c4));
        out.push((v1 << 2) | (v2 >> 4));
        if c3 != b'=' {
            out.push(((v2 & 0x0f) << 4) | (v3 >> 2));
        }
        if c4 != b'=' {
            out.push(((v3 & 0x03) << 6) | v4);
        }
    }
    out
}

/// The 6-bit value of a base64 character; `/`, `=` and anything else are 63.
fn value(c: u8) -> u8 {
    match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_line_breaks() {
        for n in 0..200usize {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let text = encode(&bytes);
            assert_eq!(decode(&text), bytes);
        }
        let text = encode(&[0u8; 171]);
        assert_eq!(
            text,
            ["A".repeat(76), "A".repeat(76), "A".repeat(76)].join("\r\n")
        );
        let text = encode(&[0u8; 174]);
        assert!(text.ends_with("\r\nAAAA"));
    }

    /// What Ice 3.7.8 printed back for odd `-v` values (checked with Python Ice).
    #[test]
    fn lenient_decoding_like_ice() {
        let relay = |s: &str| encode(&decode(s));
        assert_eq!(relay("AAE"), "AAEA");
        assert_eq!(relay("AA"), "AAAA");
        assert_eq!(relay("A"), "AAAA");
        assert_eq!(relay("AAE="), "AAE=");
        assert_eq!(relay("===="), "/w==");
        assert_eq!(relay("AB==CD=="), "AAg=");
        assert_eq!(decode(""), Vec::<u8>::new());
    }
}
