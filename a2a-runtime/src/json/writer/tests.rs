//! The writer against serde_json: the same bytes, or the same error, for every shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};

use serde::{Serialize, ser};
use serde_json::value::RawValue;
use serde_json::{Number, Value, json};

use super::error::Result;
use super::map_key::OneKey;
use super::raw_value::{BadRawValue, RAW_VALUE_TOKEN};
use super::tokens::find_escape;
use super::{to_vec, to_writer};

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
