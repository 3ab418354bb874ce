//! The JSON Canonicalization Scheme (RFC 8785): the bytes a signature over JSON covers.
//!
//! Object members are sorted by the UTF-16 code units of their names, strings use the
//! shortest escapes, numbers are written as ECMAScript writes IEEE doubles, and there is no
//! whitespace.
//!
//! ```
//! let v = serde_json::json!({"b": [1.50, "\u{20ac}"], "a": 1e30});
//! assert_eq!(a2a_runtime::auth::jcs::to_string(&v).unwrap(), r#"{"a":1e+30,"b":[1.5,"€"]}"#);
//! ```

use serde_json::Value;

/// Why a value has no canonical form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no canonical JSON form: {0}")]
pub struct CanonicalizationError(String);

/// The canonical form of `value`.
pub fn to_string(value: &Value) -> Result<String, CanonicalizationError> {
    let mut out = String::with_capacity(256);
    write(value, &mut out)?;
    Ok(out)
}

/// Appends the canonical form of `value` to `out`.
pub fn write(value: &Value, out: &mut String) -> Result<(), CanonicalizationError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            // JSON numbers are IEEE doubles to JCS (an integer beyond 2^53 loses precision,
            // as it does in every ECMAScript peer).
            let f = n
                .as_f64()
                .ok_or_else(|| CanonicalizationError(format!("number {n}")))?;
            write_number(f, out)?;
        }
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write(v, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// ECMAScript's tie rule: when the double lies exactly halfway between two shortest digit
/// strings, the one with the even last digit is chosen (Rust's formatter may pick the other,
/// e.g. 1424953923781206.25 must print as `…206.2`, RFC 8785 Appendix B).
fn even_on_tie(f: f64, exp: i32, digits: &mut String) {
    // At most 767 significant digits: this is the double's exact decimal value.
    let exact = format!("{f:.767e}");
    let Some((m, e)) = exact.split_once('e') else {
        return;
    };
    if e.parse::<i32>().ok() != Some(exp) {
        return;
    }
    let all: String = m.chars().filter(char::is_ascii_digit).collect();
    let all = all.trim_end_matches('0');
    let k = digits.len();
    if all.len() != k + 1 || !all.ends_with('5') {
        return;
    }
    let lower = &all[..k];
    // b'0' is even: the byte's parity is the digit's.
    let even = lower.bytes().last().is_some_and(|d| d & 1 == 0);
    if even && lower != digits.as_str() {
        let back = format!("0.{lower}e{}", exp + 1).parse::<f64>();
        if back.ok() == Some(f) {
            *digits = lower.to_owned();
        }
    }
}

/// ECMAScript's `Number.prototype.toString` (ECMA-262 §6.1.6.1.20) of a finite double.
fn write_number(f: f64, out: &mut String) -> Result<(), CanonicalizationError> {
    if !f.is_finite() {
        return Err(CanonicalizationError(format!("number {f}")));
    }
    if f == 0.0 {
        out.push('0');
        return Ok(());
    }
    if f < 0.0 {
        out.push('-');
    }
    // Rust writes the shortest digits that read back to the same double, as ECMAScript
    // requires: `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci
        .split_once('e')
        .ok_or_else(|| CanonicalizationError(format!("number {f}")))?;
    let exp: i32 = exp
        .parse()
        .map_err(|_| CanonicalizationError(format!("number {f}")))?;
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    even_on_tie(f.abs(), exp, &mut digits);
    let k = digits.len() as i32;
    // The decimal point sits after `n` digits.
    let n = exp + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn num(bits: u64) -> String {
        let mut s = String::new();
        write_number(f64::from_bits(bits), &mut s).unwrap();
        s
    }

    /// RFC 8785 Appendix B.
    #[test]
    fn numbers_match_the_rfc_vectors() {
        for (bits, want) in [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ] {
            assert_eq!(num(bits), want, "{bits:#x}");
        }
        assert!(write_number(f64::NAN, &mut String::new()).is_err());
        assert!(write_number(f64::INFINITY, &mut String::new()).is_err());
    }

    /// RFC 8785 §3.2.2 and §3.2.3.
    #[test]
    fn the_rfc_examples() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let v: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            to_string(&v).unwrap(),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
        let sorting = r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}"#;
        let v: Value = serde_json::from_str(sorting).unwrap();
        assert_eq!(
            to_string(&v).unwrap(),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
    }
}
