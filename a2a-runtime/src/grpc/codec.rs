//! The codec of the gRPC servers: tonic's protobuf codec, except that a request that is not a
//! valid protobuf message of its method's type is INVALID_ARGUMENT with the field path (tonic
//! answers INTERNAL, "failed to decode Protobuf message").
//!
//! `build.rs` names [`RequestCodec`] in the generated servers; the clients keep tonic's codec.

use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic_prost::ProstEncoder;

use crate::error::{A2aError, FieldViolation};

/// The codec of a server method: responses `T` encoded as tonic encodes them, requests `U`
/// decoded by [`RequestDecoder`].
#[derive(Debug, Clone)]
pub(crate) struct RequestCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for RequestCodec<T, U> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T, U> Codec for RequestCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = RequestDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::new(BufferSettings::default())
    }

    fn decoder(&mut self) -> Self::Decoder {
        RequestDecoder(PhantomData)
    }
}

/// Decodes a request `U`; a malformed one is the caller's error.
#[derive(Debug)]
pub(crate) struct RequestDecoder<U>(PhantomData<U>);

impl<U: Message + Default> Decoder for RequestDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        match U::decode(buf) {
            Ok(message) => Ok(Some(message)),
            Err(e) => Err(crate::grpc::status::to_status(&malformed(
                short_name::<U>(),
                &e.to_string(),
            ))),
        }
    }
}

/// The last segment of `U`'s Rust path: the message's name.
fn short_name<U>() -> &'static str {
    let name = std::any::type_name::<U>();
    name.rsplit("::").next().unwrap_or(name)
}

/// The invalid-params error of a request of type `message` that prost refused with `error`
/// (its text: `failed to decode Protobuf message: Inner.field: Outer.field: what`, the
/// innermost field first).
fn malformed(message: &str, error: &str) -> A2aError {
    let mut rest = error
        .strip_prefix("failed to decode Protobuf message: ")
        .unwrap_or(error);
    let mut fields = Vec::new();
    while let Some((head, tail)) = rest.split_once(": ") {
        let Some((_, field)) = head.split_once('.').filter(|(m, f)| ident(m) && ident(f)) else {
            break;
        };
        fields.push(camel(field));
        rest = tail;
    }
    fields.reverse();
    let description = if fields.is_empty() {
        format!("the request is not a valid protobuf {message}: {rest}")
    } else {
        format!("{rest} (decoding the protobuf {message})")
    };
    A2aError::invalid_params(vec![FieldViolation::new(fields.join("."), description)])
}

fn ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A Rust field name (`context_id`) as its wire name (`contextId`).
fn camel(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_path_reads_from_the_root() {
        let e = malformed(
            "SendMessageRequest",
            "failed to decode Protobuf message: Part.text: Message.parts: \
             SendMessageRequest.message: invalid string value: data is not UTF-8 encoded",
        );
        let A2aError::InvalidParams { violations } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(violations[0].field, "message.parts.text");
        assert_eq!(
            e.to_string(),
            "Invalid parameters: message.parts.text: invalid string value: data is not UTF-8 \
             encoded (decoding the protobuf SendMessageRequest)"
        );
        let e = malformed(
            "GetTaskRequest",
            "failed to decode Protobuf message: GetTaskRequest.history_length: invalid varint",
        );
        assert!(e.to_string().contains("historyLength: "), "{e}");
        let e = malformed(
            "GetTaskRequest",
            "failed to decode Protobuf message: invalid wire type value: 7",
        );
        assert_eq!(
            e.to_string(),
            "Invalid parameters: the request is not a valid protobuf GetTaskRequest: invalid wire \
             type value: 7"
        );
    }

    #[test]
    fn the_message_name_is_the_types() {
        assert_eq!(
            short_name::<crate::grpc::pb::SendMessageRequest>(),
            "SendMessageRequest"
        );
    }
}
