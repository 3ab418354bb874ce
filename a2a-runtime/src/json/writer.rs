//! Compact JSON output, byte-identical to `serde_json::to_vec`, written straight into a
//! `Vec<u8>`.
//!
//! serde_json escapes every string (object keys included) one byte at a time through its
//! `Formatter`; here a string is scanned eight bytes at a time (SWAR on `u64` words) for the
//! next byte that needs escaping (`"`, `\` or a control byte below 0x20), and the plain runs in
//! between are copied whole; a plain string of up to 16 bytes (most keys and enum names) is
//! checked and copied as one 128-bit word, and a struct's key is written with its `:` in the same
//! step. Everything else follows serde_json's `Serializer` with its
//! `CompactFormatter` step by step (numbers are written by that formatter itself), so the output,
//! and the error on a value that has no JSON form, are the same as serde_json's:
//!
//! - `/` and non-ASCII characters are written as they are; `\b \f \n \r \t \" \\` get their
//!   short escapes, other control bytes `\u00XX` with lowercase hex digits;
//! - non-finite floats are `null`; bytes are an array of numbers; unit variants are their name
//!   as a string, other enum variants `{"name":…}`;
//! - map keys: strings and chars as strings, integers, booleans and finite floats quoted, any
//!   other key is serde_json's "key must be a string" error;
//! - a `serde_json::value::RawValue` is written verbatim.

use std::fmt::{self, Display};
use std::io;

use serde::ser::{self, Impossible, Serialize};
use serde_json::ser::{CompactFormatter, Formatter};

/// The error of [`to_writer`] and [`to_vec`]: serde_json's, with the same message and
/// category as `serde_json::to_writer` gives for the same value.
pub(crate) type Error = serde_json::Error;

type Result<T, E = Error> = std::result::Result<T, E>;

/// Appends the compact JSON of `value` to `out`, byte for byte what
/// `serde_json::to_writer(&mut *out, value)` appends.
///
/// # Errors
///
/// When `value`'s `Serialize` fails or it holds a map key that JSON cannot have (as
/// serde_json); part of the JSON may then have been appended.
#[inline]
pub fn to_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<()> {
    value.serialize(&mut JsonOut { out })
}

/// The compact JSON of `value`, byte for byte what `serde_json::to_vec(value)` returns.
///
/// # Errors
///
/// As [`to_writer`].
#[inline]
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    to_writer(&mut out, value)?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------------

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
fn find_escape(bytes: &[u8]) -> usize {
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
fn write_key(out: &mut Vec<u8>, key: &str) {
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
fn write_str(out: &mut Vec<u8>, value: &str) {
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
fn collect_str<T: Display + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<()> {
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

// ---------------------------------------------------------------------------------------------
// serde_json's own errors, for values that have no JSON form
// ---------------------------------------------------------------------------------------------

/// The error serde_json gives for `value` (which must fail there), so that ours is the same.
#[cold]
fn serde_json_error<T: Serialize>(value: &T, message: &str) -> Error {
    serde_json::to_writer(io::sink(), value)
        .err()
        .unwrap_or_else(|| ser::Error::custom(message))
}

/// A map with the one key `K`.
struct OneKey<K>(K);

impl<K: Serialize> Serialize for OneKey<K> {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.0, &())?;
        map.end()
    }
}

/// A raw value whose one field has the wrong name.
struct BadRawValue;

impl Serialize for BadRawValue {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeStruct;
        let mut raw = s.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field("", "null")?;
        raw.end()
    }
}

fn key_must_be_a_string() -> Error {
    serde_json_error(&OneKey(()), "key must be a string")
}

fn float_key_must_be_finite() -> Error {
    serde_json_error(
        &OneKey(f64::NAN),
        "float key must be finite (got NaN or +/-inf)",
    )
}

fn invalid_raw_value() -> Error {
    serde_json_error(&BadRawValue, "expected value")
}

fn expected_raw_value() -> Error {
    ser::Error::custom("expected RawValue")
}

// ---------------------------------------------------------------------------------------------
// The serializer
// ---------------------------------------------------------------------------------------------

/// The struct name by which `serde_json::value::RawValue` asks to be written verbatim.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

struct JsonOut<'a> {
    out: &'a mut Vec<u8>,
}

/// Numbers through serde_json's own formatter (writing into a `Vec` cannot fail).
macro_rules! number {
    ($out:expr, $method:ident, $value:expr) => {
        CompactFormatter
            .$method(&mut *$out, $value)
            .map_err(Error::io)
    };
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// A container of declared length 0, closed as soon as opened (as serde_json).
    Empty,
    First,
    Rest,
}

enum Compound<'s, 'a> {
    Container {
        ser: &'s mut JsonOut<'a>,
        state: State,
    },
    RawValue {
        ser: &'s mut JsonOut<'a>,
    },
}

impl<'a> JsonOut<'a> {
    /// `[` (and `]` at once for a declared length of 0).
    #[inline]
    fn begin_array<'s>(&'s mut self, len: Option<usize>) -> Compound<'s, 'a> {
        if len == Some(0) {
            self.out.extend_from_slice(b"[]");
            Compound::Container {
                ser: self,
                state: State::Empty,
            }
        } else {
            self.out.push(b'[');
            Compound::Container {
                ser: self,
                state: State::First,
            }
        }
    }

    /// `{` (and `}` at once for a declared length of 0).
    #[inline]
    fn begin_object<'s>(&'s mut self, len: Option<usize>) -> Compound<'s, 'a> {
        if len == Some(0) {
            self.out.extend_from_slice(b"{}");
            Compound::Container {
                ser: self,
                state: State::Empty,
            }
        } else {
            self.out.push(b'{');
            Compound::Container {
                ser: self,
                state: State::First,
            }
        }
    }

    /// `{"variant":`
    #[inline]
    fn begin_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
    }
}

impl<'s, 'a> ser::Serializer for &'s mut JsonOut<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    #[inline]
    fn serialize_i8(self, v: i8) -> Result<()> {
        number!(self.out, write_i8, v)
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result<()> {
        number!(self.out, write_i16, v)
    }
    #[inline]
    fn serialize_i32(self, v: i32) -> Result<()> {
        number!(self.out, write_i32, v)
    }
    #[inline]
    fn serialize_i64(self, v: i64) -> Result<()> {
        number!(self.out, write_i64, v)
    }
    fn serialize_i128(self, v: i128) -> Result<()> {
        number!(self.out, write_i128, v)
    }
    #[inline]
    fn serialize_u8(self, v: u8) -> Result<()> {
        number!(self.out, write_u8, v)
    }
    #[inline]
    fn serialize_u16(self, v: u16) -> Result<()> {
        number!(self.out, write_u16, v)
    }
    #[inline]
    fn serialize_u32(self, v: u32) -> Result<()> {
        number!(self.out, write_u32, v)
    }
    #[inline]
    fn serialize_u64(self, v: u64) -> Result<()> {
        number!(self.out, write_u64, v)
    }
    fn serialize_u128(self, v: u128) -> Result<()> {
        number!(self.out, write_u128, v)
    }
    #[inline]
    fn serialize_f32(self, v: f32) -> Result<()> {
        if v.is_finite() {
            number!(self.out, write_f32, v)
        } else {
            self.serialize_unit()
        }
    }
    #[inline]
    fn serialize_f64(self, v: f64) -> Result<()> {
        if v.is_finite() {
            number!(self.out, write_f64, v)
        } else {
            self.serialize_unit()
        }
    }
    #[inline]
    fn serialize_char(self, v: char) -> Result<()> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.out.reserve(2 + v.len() * 4);
        self.out.push(b'[');
        for (i, byte) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            number!(self.out, write_u8, *byte)?;
        }
        self.out.push(b']');
        Ok(())
    }
    #[inline]
    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }
    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    #[inline]
    fn serialize_unit(self) -> Result<()> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    #[inline]
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }
    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.serialize_str(variant)
    }
    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.begin_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    #[inline]
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq> {
        Ok(self.begin_array(len))
    }
    #[inline]
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        Ok(self.begin_array(Some(len)))
    }
    #[inline]
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Ok(self.begin_array(Some(len)))
    }
    #[inline]
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        self.begin_variant(variant);
        Ok(self.begin_array(Some(len)))
    }
    #[inline]
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap> {
        Ok(self.begin_object(len))
    }
    #[inline]
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct> {
        if name == RAW_VALUE_TOKEN {
            Ok(Compound::RawValue { ser: self })
        } else {
            Ok(self.begin_object(Some(len)))
        }
    }
    #[inline]
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        self.begin_variant(variant);
        Ok(self.begin_object(Some(len)))
    }
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<()> {
        collect_str(self.out, value)
    }
}

impl Compound<'_, '_> {
    /// `,` before every element but the first.
    #[inline]
    fn separate(&mut self) -> Result<&mut Vec<u8>> {
        match self {
            Compound::Container { ser, state } => {
                if *state != State::First {
                    ser.out.push(b',');
                }
                *state = State::Rest;
                Ok(ser.out)
            }
            Compound::RawValue { .. } => Err(invalid_raw_value()),
        }
    }

    /// Closes a container with `close` unless it was closed when opened.
    #[inline]
    fn close(self, close: &[u8]) -> Result<()> {
        match self {
            Compound::Container { ser, state } => {
                if state != State::Empty {
                    ser.out.extend_from_slice(close);
                }
                Ok(())
            }
            Compound::RawValue { .. } => Err(invalid_raw_value()),
        }
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let out = self.separate()?;
        value.serialize(&mut JsonOut { out })
    }

    #[inline]
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<()> {
        let out = self.separate()?;
        write_key(out, key);
        value.serialize(&mut JsonOut { out })
    }
}

/// The array-shaped compounds: each element goes through [`Compound::element`], `]` closes.
macro_rules! array_compound {
    ($($trait:ident :: $method:ident),* $(,)?) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            #[inline]
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.element(value)
            }
            #[inline]
            fn end(self) -> Result<()> {
                self.close(b"]")
            }
        }
    )*};
}

array_compound!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
);

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        match self {
            Compound::Container { ser, state } => {
                if state != State::Empty {
                    ser.out.push(b']');
                }
                ser.out.push(b'}');
                Ok(())
            }
            Compound::RawValue { .. } => Err(invalid_raw_value()),
        }
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        let out = self.separate()?;
        key.serialize(MapKey { out })
    }
    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        match self {
            Compound::Container { ser, .. } => {
                ser.out.push(b':');
                value.serialize(&mut **ser)
            }
            Compound::RawValue { .. } => Err(invalid_raw_value()),
        }
    }
    #[inline]
    fn end(self) -> Result<()> {
        self.close(b"}")
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        match self {
            Compound::RawValue { ser } => {
                if key == RAW_VALUE_TOKEN {
                    value.serialize(RawValueStr { out: ser.out })
                } else {
                    Err(invalid_raw_value())
                }
            }
            Compound::Container { .. } => self.field(key, value),
        }
    }
    #[inline]
    fn end(self) -> Result<()> {
        match self {
            Compound::RawValue { .. } => Ok(()),
            container => container.close(b"}"),
        }
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    #[inline]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.field(key, value)
    }
    #[inline]
    fn end(self) -> Result<()> {
        match self {
            Compound::Container { ser, state } => {
                if state != State::Empty {
                    ser.out.push(b'}');
                }
                ser.out.push(b'}');
                Ok(())
            }
            Compound::RawValue { .. } => Err(invalid_raw_value()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Map keys (serde_json's MapKeySerializer)
// ---------------------------------------------------------------------------------------------

struct MapKey<'a> {
    out: &'a mut Vec<u8>,
}

/// A key that is a number or a boolean: quoted.
macro_rules! quoted_key {
    ($($method:ident: $ty:ty => $write:ident;)*) => {$(
        fn $method(self, v: $ty) -> Result<()> {
            self.out.push(b'"');
            number!(self.out, $write, v)?;
            self.out.push(b'"');
            Ok(())
        }
    )*};
}

/// Key shapes JSON has no form for.
macro_rules! not_a_key {
    ($($method:ident($($arg:ty),*) -> $ret:ty;)*) => {$(
        fn $method(self, $(_: $arg),*) -> Result<$ret> {
            Err(key_must_be_a_string())
        }
    )*};
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        write_str(self.out, variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<()> {
        collect_str(self.out, value)
    }
    quoted_key! {
        serialize_bool: bool => write_bool;
        serialize_i8: i8 => write_i8;
        serialize_i16: i16 => write_i16;
        serialize_i32: i32 => write_i32;
        serialize_i64: i64 => write_i64;
        serialize_i128: i128 => write_i128;
        serialize_u8: u8 => write_u8;
        serialize_u16: u16 => write_u16;
        serialize_u32: u32 => write_u32;
        serialize_u64: u64 => write_u64;
        serialize_u128: u128 => write_u128;
    }
    fn serialize_f32(self, v: f32) -> Result<()> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.out.push(b'"');
        number!(self.out, write_f32, v)?;
        self.out.push(b'"');
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.out.push(b'"');
        number!(self.out, write_f64, v)?;
        self.out.push(b'"');
        Ok(())
    }
    not_a_key! {
        serialize_bytes(&[u8]) -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_none() -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant;
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }
}

// ---------------------------------------------------------------------------------------------
// RawValue contents (serde_json's RawValueStrEmitter)
// ---------------------------------------------------------------------------------------------

struct RawValueStr<'a> {
    out: &'a mut Vec<u8>,
}

/// Anything but a string inside a raw value.
macro_rules! not_raw {
    ($($method:ident($($arg:ty),*) -> $ret:ty;)*) => {$(
        fn $method(self, $(_: $arg),*) -> Result<$ret> {
            Err(expected_raw_value())
        }
    )*};
}

impl ser::Serializer for RawValueStr<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<()> {
        self.out.extend_from_slice(v.as_bytes());
        Ok(())
    }
    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<()> {
        self.serialize_str(&value.to_string())
    }
    not_raw! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_i128(i128) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_u128(u128) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant;
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<()> {
        Err(expected_raw_value())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(expected_raw_value())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(expected_raw_value())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::{BTreeMap, HashMap};

    use serde::Serialize;
    use serde_json::value::RawValue;
    use serde_json::{Number, Value, json};

    use super::*;

    /// Ours and serde_json's output (or error message) for `value`, which must agree.
    #[track_caller]
    fn same<T: Serialize + ?Sized>(value: &T) -> String {
        let theirs = serde_json::to_vec(value);
        let ours = to_vec(value);
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => {
                assert_eq!(
                    String::from_utf8_lossy(&ours),
                    String::from_utf8_lossy(&theirs)
                );
                assert_eq!(ours, theirs);
                String::from_utf8(ours).unwrap()
            }
            (Err(ours), Err(theirs)) => {
                assert_eq!(ours.to_string(), theirs.to_string());
                assert_eq!(ours.classify(), theirs.classify());
                format!("error: {ours}")
            }
            (ours, theirs) => panic!("ours {ours:?}, serde_json {theirs:?}"),
        }
    }

    #[test]
    fn every_escape_class() {
        assert_eq!(same("\""), r#""\"""#);
        assert_eq!(same("\\"), r#""\\""#);
        assert_eq!(same("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(
            same("\u{0}\u{1}\u{b}\u{1f}"),
            r#""\u0000\u0001\u000b\u001f""#
        );
        // Not escaped: solidus, DEL, space, non-ASCII, line separators.
        assert_eq!(same("/ \u{7f}é\u{2028}😀"), "\"/ \u{7f}é\u{2028}😀\"");
        for byte in 0u8..=0x7f {
            same(&char::from(byte).to_string());
        }
    }

    #[test]
    fn escapes_at_every_position_and_length() {
        // Every special byte at every offset of strings long enough to span several words
        // (and the padded tail), next to multi-byte characters.
        for special in ['"', '\\', '\n', '\u{0}', '\u{1f}', '\u{1}'] {
            for len in 0..40 {
                for at in 0..=len {
                    let mut s: String = "aé😀b".chars().cycle().take(len).collect();
                    let at = s.char_indices().nth(at).map_or(s.len(), |(i, _)| i);
                    s.insert(at, special);
                    same(&s);
                    s.push(special);
                    same(&s);
                }
            }
        }
        same(&"\"".repeat(33));
        same(&"\u{1f}x\\".repeat(20));
        // Bytes just above and below the thresholds (the SWAR borrows).
        same("\u{1f}\u{20}\u{21}\u{22}\u{23}\u{5b}\u{5c}\u{5d}\u{7f}\u{80}\u{ff}");
    }

    #[test]
    fn struct_keys_of_every_length_with_and_without_escapes() {
        // Keys of derived structs go through `write_key` (its fixed-size copy up to 16 bytes);
        // they are `&'static str`, so these are leaked, once per test run.
        struct Keyed(Vec<&'static str>);
        impl Serialize for Keyed {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeStruct;
                let mut st = s.serialize_struct("Keyed", self.0.len())?;
                for (i, key) in self.0.iter().enumerate() {
                    st.serialize_field(key, &i)?;
                }
                st.end()
            }
        }
        let mut keys = Vec::new();
        for len in 0..=24 {
            let plain: String = "kéyЖ".chars().cycle().take(len).collect();
            keys.push(plain.clone());
            for special in ['"', '\\', '\n', '\u{1f}'] {
                for at in [0, len / 2, len] {
                    let mut k = plain.clone();
                    let at = k.char_indices().nth(at).map_or(k.len(), |(i, _)| i);
                    k.insert(at, special);
                    keys.push(k);
                }
            }
        }
        let keys: Vec<&'static str> = keys
            .into_iter()
            .map(|k| &*Box::leak(k.into_boxed_str()))
            .collect();
        for key in &keys {
            same(&Keyed(vec![key]));
        }
        same(&Keyed(keys));
    }

    #[test]
    fn search_is_exact() {
        for len in 0..24 {
            for at in 0..len {
                for special in [0u8, 0x1f, b'"', b'\\'] {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = special;
                    // A special byte after the first must not shadow it, nor a borrow make
                    // a plain byte look special.
                    if at + 1 < len {
                        bytes[at + 1] = 0;
                    }
                    assert_eq!(find_escape(&bytes), at, "{bytes:?}");
                }
            }
            assert_eq!(find_escape(&vec![b' '; len]), len);
            assert_eq!(find_escape(&vec![0x80; len]), len);
            assert_eq!(find_escape(&vec![0xff; len]), len);
        }
    }

    #[test]
    fn scalars() {
        assert_eq!(same(&true), "true");
        assert_eq!(same(&false), "false");
        assert_eq!(same(&()), "null");
        assert_eq!(same(&None::<u8>), "null");
        assert_eq!(same(&Some(5u8)), "5");
        assert_eq!(same(&'x'), r#""x""#);
        assert_eq!(same(&'\n'), r#""\n""#);
        assert_eq!(same(&u64::MAX), "18446744073709551615");
        assert_eq!(same(&i64::MIN), "-9223372036854775808");
        same(&i8::MIN);
        same(&i16::MIN);
        same(&i32::MIN);
        same(&u8::MAX);
        same(&u16::MAX);
        same(&u32::MAX);
        same(&i128::MIN);
        same(&u128::MAX);
        same(&0u64);
    }

    #[test]
    fn floats() {
        for f in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.5e-7,
            1e20,
            1e21,
            1e-7,
            123.456,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::EPSILON,
        ] {
            same(&f);
            same(&-f);
            same(&(f as f32));
        }
        assert_eq!(same(&f64::NAN), "null");
        assert_eq!(same(&f64::INFINITY), "null");
        assert_eq!(same(&f64::NEG_INFINITY), "null");
        assert_eq!(same(&f32::NAN), "null");
        assert_eq!(same(&f32::INFINITY), "null");
        assert_eq!(same(&1e20), "1e+20");
        assert_eq!(same(&-0.0), "-0.0");
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Newtype(u8);

    #[derive(Serialize)]
    struct Tuple(u8, &'static str);

    #[derive(Serialize)]
    struct EmptyTuple();

    #[derive(Serialize)]
    struct Empty {}

    #[derive(Serialize)]
    struct Fields {
        a: u8,
        #[serde(rename = "b\"\n")]
        b: Vec<u8>,
        #[serde(skip_serializing_if = "Option::is_none")]
        c: Option<u8>,
        d: Option<u8>,
    }

    #[derive(Serialize)]
    struct Flattened {
        x: u8,
        #[serde(flatten)]
        rest: BTreeMap<String, u8>,
    }

    #[derive(Serialize)]
    enum Shapes {
        Unit,
        Newtype(u8),
        Tuple(u8, &'static str),
        EmptyTuple(),
        Struct { a: u8, b: &'static str },
        EmptyStruct {},
    }

    #[derive(Serialize)]
    #[serde(tag = "type")]
    enum Tagged {
        A { x: u8 },
        B(Fields),
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    enum Untagged {
        A(u8),
        B { y: &'static str },
    }

    #[test]
    fn data_model_shapes() {
        assert_eq!(same(&Unit), "null");
        assert_eq!(same(&Newtype(3)), "3");
        assert_eq!(same(&Tuple(1, "x")), r#"[1,"x"]"#);
        assert_eq!(same(&EmptyTuple()), "[]");
        assert_eq!(same(&Empty {}), "{}");
        let fields = Fields {
            a: 1,
            b: vec![0, 9, 10, 99, 100, 255],
            c: None,
            d: None,
        };
        assert_eq!(
            same(&fields),
            r#"{"a":1,"b\"\n":[0,9,10,99,100,255],"d":null}"#
        );
        same(&Fields {
            c: Some(7),
            ..fields
        });
        same(&Flattened {
            x: 1,
            rest: BTreeMap::from([("k".into(), 2), ("\u{1}".into(), 3)]),
        });
        same(&Flattened {
            x: 1,
            rest: BTreeMap::new(),
        });
        assert_eq!(same(&Shapes::Unit), r#""Unit""#);
        assert_eq!(same(&Shapes::Newtype(4)), r#"{"Newtype":4}"#);
        assert_eq!(same(&Shapes::Tuple(1, "t")), r#"{"Tuple":[1,"t"]}"#);
        assert_eq!(same(&Shapes::EmptyTuple()), r#"{"EmptyTuple":[]}"#);
        assert_eq!(
            same(&Shapes::Struct { a: 1, b: "s" }),
            r#"{"Struct":{"a":1,"b":"s"}}"#
        );
        assert_eq!(same(&Shapes::EmptyStruct {}), r#"{"EmptyStruct":{}}"#);
        same(&Tagged::A { x: 1 });
        same(&Tagged::B(Fields {
            a: 2,
            b: vec![],
            c: Some(1),
            d: Some(2),
        }));
        same(&Untagged::A(1));
        same(&Untagged::B { y: "y" });
        same(&(1u8, "two", 3.0f64, (), [4u8; 0]));
        same(&[[1u8; 2]; 3]);
        same(&vec![Some(1u8), None]);
    }

    #[test]
    fn bytes_are_arrays_of_numbers() {
        struct Bytes(Vec<u8>);
        impl Serialize for Bytes {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
        assert_eq!(same(&Bytes(vec![])), "[]");
        assert_eq!(same(&Bytes(vec![0, 7, 42, 255])), "[0,7,42,255]");
        same(&Bytes((0..=255).collect()));
    }

    #[test]
    fn empty_containers() {
        same(&Vec::<u8>::new());
        same(&BTreeMap::<String, u8>::new());
        same(&json!({}));
        same(&json!([]));
        same(&json!({"a": {}, "b": [], "c": [[], {}], "": ""}));
        same("");
    }

    /// A sequence and a map that declare a length of 0 but hold elements: serde_json closes
    /// them when opened; so must we.
    #[test]
    fn lying_lengths_come_out_as_in_serde_json() {
        struct Lying;
        impl Serialize for Lying {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeSeq;
                let mut seq = s.serialize_seq(Some(0))?;
                seq.serialize_element(&1)?;
                seq.serialize_element(&2)?;
                seq.end()
            }
        }
        same(&Lying);
        struct LyingMap;
        impl Serialize for LyingMap {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeMap;
                let mut map = s.serialize_map(Some(0))?;
                map.serialize_entry("a", &1)?;
                map.end()
            }
        }
        same(&LyingMap);
    }

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum KeyVariant {
        First,
        #[serde(rename = "se\"cond")]
        Second,
    }

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    struct KeyNewtype(String);

    #[test]
    fn map_keys() {
        same(&BTreeMap::from([("b", 1), ("a\n", 2), ("", 3)]));
        same(&BTreeMap::from([('k', 1), ('"', 2)]));
        assert_eq!(
            same(&BTreeMap::from([(-1i64, 1), (2, 2)])),
            r#"{"-1":1,"2":2}"#
        );
        same(&BTreeMap::from([(u64::MAX, 1)]));
        same(&BTreeMap::from([(i8::MIN, 1)]));
        same(&BTreeMap::from([(u8::MAX, 1)]));
        same(&BTreeMap::from([(i16::MIN, 1)]));
        same(&BTreeMap::from([(u16::MAX, 1)]));
        same(&BTreeMap::from([(i32::MIN, 1)]));
        same(&BTreeMap::from([(u32::MAX, 1)]));
        same(&BTreeMap::from([(i128::MIN, 1)]));
        same(&BTreeMap::from([(u128::MAX, 1)]));
        assert_eq!(
            same(&BTreeMap::from([(true, 1), (false, 0)])),
            r#"{"false":0,"true":1}"#
        );
        same(&BTreeMap::from([
            (KeyVariant::First, 1),
            (KeyVariant::Second, 2),
        ]));
        same(&BTreeMap::from([(KeyNewtype("n\\".into()), 1)]));
        same(&BTreeMap::from([(Some("s"), 1)]));
        // Floats: finite quoted, others serde_json's error.
        same(&OneKey(1.5f64));
        same(&OneKey(1e20f64));
        same(&OneKey(-0.0f64));
        same(&OneKey(1.5f32));
        assert!(same(&OneKey(f64::NAN)).starts_with("error: "));
        assert!(same(&OneKey(f64::INFINITY)).starts_with("error: "));
        assert!(same(&OneKey(f32::NEG_INFINITY)).starts_with("error: "));
        // Keys that are no string.
        for key in [
            same(&OneKey(())),
            same(&OneKey(None::<u8>)),
            same(&OneKey(Unit)),
            same(&OneKey(vec![1u8])),
            same(&OneKey((1u8, 2u8))),
            same(&OneKey(Tuple(1, "x"))),
            same(&OneKey(Shapes::Newtype(1))),
            same(&OneKey(Shapes::Tuple(1, "x"))),
            same(&OneKey(Shapes::Struct { a: 1, b: "x" })),
            same(&OneKey(BTreeMap::from([("a", 1)]))),
            same(&OneKey(Fields {
                a: 1,
                b: vec![],
                c: None,
                d: None,
            })),
        ] {
            assert_eq!(key, "error: key must be a string");
        }
        // collect_str keys (e.g. an IP address or a Display type).
        same(&HashMap::from([(std::net::Ipv4Addr::LOCALHOST, 1)]));
    }

    #[test]
    fn collect_str_escapes_the_display_output() {
        struct Shown(&'static str);
        impl Serialize for Shown {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&format_args!("<{}|{}>", self.0, self.0))
            }
        }
        same(&Shown("plain"));
        same(&Shown("a \"quoted\"\n\\ line\u{1}"));
        same(&Shown(""));
        same(&std::net::Ipv4Addr::new(10, 1, 2, 3));
    }

    #[test]
    fn values_numbers_and_maps() {
        let value = json!({
            "null": null,
            "t": true,
            "n": [0, -1, u64::MAX, i64::MIN, 1.5e-7, 1e20, -0.0, 0.1],
            "s": "x\u{0}y\"z",
            "nested": {"a": [{"b": [[{}]]}], "c\n": {"d": {"e": "f"}}},
            "empty": {"o": {}, "a": []}
        });
        same(&value);
        same(&Number::from(u64::MAX));
        same(&Number::from(i64::MIN));
        same(&Number::from_f64(1.5e-7).unwrap());
        same(value.as_object().unwrap());
        same(&Value::Null);
        same(&Value::from(f64::NAN)); // Value::Null
    }

    #[test]
    fn raw_values_are_written_verbatim() {
        let raw = RawValue::from_string(r#"{ "a" : [1, 2] }"#.into()).unwrap();
        assert_eq!(same(&raw), r#"{ "a" : [1, 2] }"#);
        same(&vec![&*raw, &*raw]);
        same(&BTreeMap::from([("raw", &*raw)]));
        // The wrong field name, or anything but a string inside, is serde_json's error.
        assert!(same(&BadRawValue).starts_with("error: "));
        struct NotAString;
        impl Serialize for NotAString {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeStruct;
                let mut raw = s.serialize_struct(RAW_VALUE_TOKEN, 1)?;
                raw.serialize_field(RAW_VALUE_TOKEN, &1)?;
                raw.end()
            }
        }
        assert_eq!(same(&NotAString), "error: expected RawValue");
    }

    #[test]
    fn to_writer_appends() {
        let mut out = b"prefix:".to_vec();
        to_writer(&mut out, &json!({"a": "b"})).unwrap();
        assert_eq!(out, br#"prefix:{"a":"b"}"#);
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_written_as_serde_json_does(s in "(?s).{0,40}") {
            proptest::prop_assert_eq!(to_vec(&s).unwrap(), serde_json::to_vec(&s).unwrap());
        }

        #[test]
        fn any_bytes_as_a_string(bytes in proptest::collection::vec(0u8..0x80, 0..40)) {
            let s = String::from_utf8(bytes).unwrap();
            proptest::prop_assert_eq!(to_vec(&s).unwrap(), serde_json::to_vec(&s).unwrap());
        }

        #[test]
        fn any_float(f in proptest::num::f64::ANY) {
            proptest::prop_assert_eq!(to_vec(&f).unwrap(), serde_json::to_vec(&f).unwrap());
            let f = f as f32;
            proptest::prop_assert_eq!(to_vec(&f).unwrap(), serde_json::to_vec(&f).unwrap());
        }
    }
}
