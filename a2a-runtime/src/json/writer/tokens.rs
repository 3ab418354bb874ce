//! The tokens the serializers write: strings and keys, escaped as serde_json does but scanned
//! eight bytes at a time, and numbers, through serde_json's own formatter.

use std::fmt::{self, Display};

use serde::ser;

use super::error::Result;

/// Numbers through serde_json's own formatter (writing into a `Vec` cannot fail).
macro_rules! number {
    ($out:expr, $method:ident, $value:expr) => {
        <serde_json::ser::CompactFormatter as serde_json::ser::Formatter>::$method(
            &mut serde_json::ser::CompactFormatter,
            &mut *$out,
            $value,
        )
        .map_err(serde_json::Error::io)
    };
}
pub(super) use number;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` (read little-endian) that may need escaping. The lowest
/// set bit is always exact: a false positive (a borrow carried up from a lower byte) only
/// ever sits above a byte that does need escaping.
#[inline(always)]
fn specials(word: u64) -> u64 {
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGHS
}

/// The first `bytes.len()` (at most 8) bytes of `bytes` as a little-endian word, the lanes above
/// them filled with spaces (which never need escaping). Reads whole words only, no byte loop and
/// no `memcpy`: short strings (most keys) are the common case.
#[inline(always)]
fn short_word(bytes: &[u8]) -> u64 {
    const SPACES: u64 = ONES * 0x20;
    let n = bytes.len();
    let word = if let (Some(lo), Some(hi)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        // 4..=8 bytes: two overlapping reads; the overlap holds the same bytes in both.
        u64::from(u32::from_le_bytes(*lo)) | u64::from(u32::from_le_bytes(*hi)) << (8 * (n - 4))
    } else if let (Some(lo), Some(hi)) = (bytes.first_chunk::<2>(), bytes.last_chunk::<2>()) {
        u64::from(u16::from_le_bytes(*lo)) | u64::from(u16::from_le_bytes(*hi)) << (8 * (n - 2))
    } else {
        bytes.first().map_or(0, |&b| u64::from(b))
    };
    if n >= 8 {
        word
    } else {
        word | SPACES << (8 * n)
    }
}

/// The index of the first byte of `bytes` that needs escaping, or `bytes.len()`.
#[cfg(test)]
pub(super) fn find_escape(bytes: &[u8]) -> usize {
    let mut at = 0;
    for chunk in bytes.chunks(8) {
        let found = specials(short_word(chunk));
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += chunk.len();
    }
    at
}

/// Writes the escape of `byte` (one that [`find_escape`] stops at), as serde_json does.
#[cold]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Writes the escaped contents of a string, without the quotes. Whole words (8 bytes) are
/// scanned for the next byte to escape and the plain run before it copied at once; the last
/// 1..=7 bytes are written as one word and the output cut back to the bytes that belong to
/// it, so that a short string (most keys) costs no `memcpy` call.
#[inline]
fn write_str_contents(out: &mut Vec<u8>, value: &str) {
    let mut bytes = value.as_bytes();
    loop {
        let mut words = 0;
        let mut rest = bytes;
        let mut hit = None;
        while let Some((word, tail)) = rest.split_first_chunk::<8>() {
            let found = specials(u64::from_le_bytes(*word));
            if found != 0 {
                hit = Some(words + (found.trailing_zeros() / 8) as usize);
                break;
            }
            words += 8;
            rest = tail;
        }
        if let Some(at) = hit {
            let (plain, escaped) = bytes.split_at(at);
            out.extend_from_slice(plain);
            let Some((&byte, after)) = escaped.split_first() else {
                return;
            };
            write_escape(out, byte);
            bytes = after;
            continue;
        }
        if words > 0 {
            out.extend_from_slice(bytes.get(..words).unwrap_or_default());
        }
        if rest.is_empty() {
            return;
        }
        // The last 1..=7 bytes.
        let word = short_word(rest);
        let found = specials(word);
        let plain = if found == 0 {
            rest.len()
        } else {
            (found.trailing_zeros() / 8) as usize
        };
        let end = out.len() + plain;
        out.extend_from_slice(&word.to_le_bytes());
        out.truncate(end);
        let Some((&byte, after)) = rest.get(plain..).and_then(<[u8]>::split_first) else {
            return;
        };
        write_escape(out, byte);
        bytes = after;
    }
}

/// True when no byte of `bytes` needs escaping: whole words, then the 1..=7 bytes left, are
/// scanned without a branch per word (most strings — keys, ids, plain text — need none).
#[inline(always)]
fn is_plain(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    let mut found = 0;
    for word in &mut words {
        found |= word
            .first_chunk::<8>()
            .map_or(0, |w| specials(u64::from_le_bytes(*w)));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        found |= specials(short_word(rest));
    }
    found == 0
}

/// The longest string written by [`write_short`].
const SHORT: usize = 16;

/// `bytes` (at most [`SHORT`]) as a little-endian `u128`, the lanes above them filled with
/// spaces, when none of them needs escaping. Whole-word reads only: no byte loop, no `memcpy`.
#[inline(always)]
fn plain_short(bytes: &[u8]) -> Option<u128> {
    const SPACES: u128 = (ONES as u128 | (ONES as u128) << 64) * 0x20;
    let n = bytes.len();
    let word = if let (Some(lo), Some(hi)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        // 8..=16 bytes: two overlapping reads; the overlap holds the same bytes in both.
        let word = u128::from(u64::from_le_bytes(*lo))
            | u128::from(u64::from_le_bytes(*hi)) << (8 * (n - 8));
        if n >= SHORT {
            word
        } else {
            word | SPACES << (8 * n)
        }
    } else {
        u128::from(short_word(bytes)) | SPACES << 64
    };
    let found = specials(word as u64) | specials((word >> 64) as u64);
    (found == 0).then_some(word)
}

/// Writes `"`, the `n` bytes held by `word` (from [`plain_short`]), then `close`: three
/// fixed-size stores into `out` (the word's padding cut off before `close`), no `memcpy`.
#[inline(always)]
fn write_short(out: &mut Vec<u8>, word: u128, n: usize, close: &[u8]) {
    out.reserve(1 + SHORT + close.len());
    out.push(b'"');
    let end = out.len() + n;
    out.extend_from_slice(&word.to_le_bytes());
    out.truncate(end);
    out.extend_from_slice(close);
}

/// Writes an object key and its colon: `"key":`. Keys are nearly always short and plain.
#[inline]
pub(super) fn write_key(out: &mut Vec<u8>, key: &str) {
    if key.len() <= SHORT
        && let Some(word) = plain_short(key.as_bytes())
    {
        write_short(out, word, key.len(), b"\":");
    } else {
        write_str(out, key);
        out.push(b':');
    }
}

/// Writes a quoted, escaped string: a short plain one in one fixed-size copy, a longer plain
/// one in one copy, one that needs escapes through [`write_str_contents`].
#[inline]
pub(super) fn write_str(out: &mut Vec<u8>, value: &str) {
    if value.len() <= SHORT
        && let Some(word) = plain_short(value.as_bytes())
    {
        write_short(out, word, value.len(), b"\"");
        return;
    }
    out.reserve(value.len() + 2);
    out.push(b'"');
    if is_plain(value.as_bytes()) {
        out.extend_from_slice(value.as_bytes());
    } else {
        write_str_contents(out, value);
    }
    out.push(b'"');
}

/// `collect_str`: the `Display` output, escaped piece by piece as it is formatted.
pub(super) fn collect_str<T: Display + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<()> {
    struct Escaping<'a>(&'a mut Vec<u8>);
    impl fmt::Write for Escaping<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            write_str_contents(self.0, s);
            Ok(())
        }
    }
    out.push(b'"');
    fmt::write(&mut Escaping(out), format_args!("{value}"))
        .map_err(|_| ser::Error::custom("a Display implementation returned an error"))?;
    out.push(b'"');
    Ok(())
}
