//! Map keys (serde_json's `MapKeySerializer`): strings as they are, numbers and booleans
//! quoted, any other key serde_json's "key must be a string" error.

use std::fmt::Display;

use serde::ser::{self, Impossible, Serialize};

use super::error::{Error, Result, serde_json_error};
use super::tokens::{collect_str, number, write_str};

/// Writes one map key.
pub(super) struct MapKey<'a> {
    pub(super) out: &'a mut Vec<u8>,
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

/// A map with the one key `K`.
pub(super) struct OneKey<K>(pub(super) K);

impl<K: Serialize> Serialize for OneKey<K> {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.0, &())?;
        map.end()
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
