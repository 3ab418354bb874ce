//! The serializer: serde_json's `Serializer` with its `CompactFormatter`, step by step, into a
//! `Vec<u8>`.

use std::fmt::Display;

use serde::ser::{self, Serialize};

use super::error::{Error, Result};
use super::map_key::MapKey;
use super::raw_value::{RAW_VALUE_TOKEN, RawValueStr, invalid_raw_value};
use super::tokens::{collect_str, number, write_key, write_str};

/// Writes one value into `out`.
pub(super) struct JsonOut<'a> {
    pub(super) out: &'a mut Vec<u8>,
}

/// Where a container is: before its first element, after one, or already closed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// A container of declared length 0, closed as soon as opened (as serde_json).
    Empty,
    First,
    Rest,
}

/// An open array, object or variant, or a raw value being written.
pub(super) enum Compound<'s, 'a> {
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
