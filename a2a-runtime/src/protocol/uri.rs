//! Path segments and query values of the HTTP+JSON binding's URLs, encoded by the clients and
//! decoded by the server.

/// Percent-encodes `s` as one path segment or query value: every byte but the unreserved
/// characters of RFC 3986 (`A-Z a-z 0-9 - _ . ~`) becomes `%XX`.
#[cfg(any(feature = "client", test))]
pub(crate) fn encode_component(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
    out
}

/// The name-value pairs of a query string (`application/x-www-form-urlencoded`: `+` is a space,
/// `%XX` a byte, a malformed escape is kept as it is, invalid UTF-8 is replaced).
#[cfg(any(feature = "server", test))]
pub(crate) fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode_form(k), decode_form(v))
    })
}

/// Decodes one name or value of a query string (see [`query_pairs`]).
#[cfg(any(feature = "server", test))]
fn decode_form(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_survive_the_round_trip() {
        for s in ["plain-id_1.~", "a b+c&d=e/f?g#h%", "é ü 日本", ""] {
            let encoded = encode_component(s);
            assert!(
                encoded
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.~%".contains(&b)),
                "{encoded}"
            );
            let query = format!("k={encoded}");
            let pairs: Vec<_> = query_pairs(&query).collect();
            assert_eq!(pairs, [("k".to_owned(), s.to_owned())]);
        }
        assert_eq!(encode_component("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn queries_decode_as_forms_do() {
        let pairs: Vec<_> = query_pairs("a=1+2&&b&c=%4a%zz%4&d=%ff").collect();
        assert_eq!(
            pairs,
            [
                ("a".to_owned(), "1 2".to_owned()),
                ("b".to_owned(), String::new()),
                ("c".to_owned(), "J%zz%4".to_owned()),
                ("d".to_owned(), "\u{fffd}".to_owned()),
            ]
        );
    }
}
