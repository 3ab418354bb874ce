//! `serde_json::value::RawValue`: its contents written verbatim (serde_json's
//! `RawValueStrEmitter`), and the errors of a raw value that is not one.

use std::fmt::Display;

use serde::ser::{self, Impossible, Serialize};

use super::error::{Error, Result, serde_json_error};

/// The struct name by which `serde_json::value::RawValue` asks to be written verbatim.
pub(super) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Writes the string a raw value holds, verbatim.
pub(super) struct RawValueStr<'a> {
    pub(super) out: &'a mut Vec<u8>,
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

/// A raw value whose one field has the wrong name.
pub(super) struct BadRawValue;

impl Serialize for BadRawValue {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeStruct;
        let mut raw = s.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field("", "null")?;
        raw.end()
    }
}

pub(super) fn invalid_raw_value() -> Error {
    serde_json_error(&BadRawValue, "expected value")
}

fn expected_raw_value() -> Error {
    ser::Error::custom("expected RawValue")
}
