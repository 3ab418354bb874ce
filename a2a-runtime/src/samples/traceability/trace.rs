//! The trace's data, as the specification's protobuf messages shape it on the wire.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::types::Timestamp;

/// `null` or absent → the default.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An optional protobuf `int64`: written as a JSON number, read from a number (integral) or a
/// decimal string, `null` meaning absent.
mod int64 {
    use super::{Deserializer, Serializer, de};

    #[allow(clippy::ref_option)] // serde's `with` signature
    pub(super) fn serialize<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(n) => s.serialize_i64(*n),
            None => s.serialize_none(),
        }
    }

    struct Visitor;

    impl<'de> de::Visitor<'de> for Visitor {
        type Value = Option<i64>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an int64 (a JSON integer or a decimal string)")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            i64::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("{v} is out of the int64 range")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            // i64::MAX as f64 rounds up to 2^63, so the upper bound is exclusive.
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            if v.fract() == 0.0 && v >= i64::MIN as f64 && v < i64::MAX as f64 {
                Ok(Some(v as i64))
            } else {
                Err(E::custom(format!("{v} is not an int64")))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            v.trim()
                .parse::<i64>()
                .map(Some)
                .map_err(|_| E::custom(format!("{v:?} is not an int64")))
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_option(Visitor)
    }
}

/// A trace: the steps an agent took to produce a response (`ResponseTrace` in the
/// specification).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseTrace {
    /// A unique identifier of the trace.
    #[serde(default, alias = "traceId", deserialize_with = "null_default")]
    pub trace_id: String,
    /// The steps that make up the trace.
    #[serde(default, deserialize_with = "null_default")]
    pub steps: Vec<Step>,
}

impl ResponseTrace {
    /// The step with `step_id`.
    pub fn step(&self, step_id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.step_id == step_id)
    }

    /// The steps whose parent is `step_id`.
    pub fn children<'a>(&'a self, step_id: &'a str) -> impl Iterator<Item = &'a Step> + 'a {
        self.steps
            .iter()
            .filter(move |s| s.parent_step_id.as_deref() == Some(step_id))
    }
}

/// The kind of operation a step represents (`CallTypeEnum`): `"AGENT"` or `"TOOL"` on the
/// wire (the enum numbers 1 and 2 are accepted too).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CallType {
    /// A call to an agent (`AGENT = 1`).
    Agent,
    /// A call to a tool (`TOOL = 2`).
    Tool,
    /// A name the specification does not define (the reference implementation also emits
    /// `"HOST"`), kept as received.
    Other(String),
}

impl CallType {
    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Agent => "AGENT",
            Self::Tool => "TOOL",
            Self::Other(s) => s,
        }
    }
}

impl Serialize for CallType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CallType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = CallType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a CallTypeEnum name (\"AGENT\", \"TOOL\") or number (1, 2)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CallType, E> {
                Ok(match v {
                    "AGENT" => CallType::Agent,
                    "TOOL" => CallType::Tool,
                    other => CallType::Other(other.to_owned()),
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CallType, E> {
                match v {
                    1 => Ok(CallType::Agent),
                    2 => Ok(CallType::Tool),
                    n => Err(E::custom(format!("{n} is not a CallTypeEnum value"))),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CallType, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("{v} is not a CallTypeEnum value")))
                    .and_then(|v| self.visit_u64(v))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// What a step did (`StepAction`, a oneof): `{"tool_invocation": …}` or
/// `{"agent_invocation": …}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StepAction {
    /// A tool call.
    #[serde(rename = "tool_invocation", alias = "toolInvocation")]
    ToolInvocation(ToolInvocation),
    /// A call to another agent.
    #[serde(rename = "agent_invocation", alias = "agentInvocation")]
    AgentInvocation(AgentInvocation),
}

/// A tool call (`ToolInvocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The tool's name.
    #[serde(default, alias = "toolName", deserialize_with = "null_default")]
    pub tool_name: String,
    /// Its parameters (a `google.protobuf.Struct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Map<String, Value>>,
}

/// A call to another agent (`AgentInvocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentInvocation {
    /// The URL of the agent that was invoked.
    #[serde(
        default,
        alias = "agentUrl",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub agent_url: String,
    /// The agent's name.
    #[serde(
        default,
        alias = "agentName",
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub agent_name: String,
    /// The request sent to the agent (a `google.protobuf.Struct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Map<String, Value>>,
    /// The callee's own trace of this call, when it supports the extension and the caller
    /// activated it.
    #[serde(
        default,
        alias = "responseTrace",
        skip_serializing_if = "Option::is_none"
    )]
    pub response_trace: Option<Box<ResponseTrace>>,
}

/// One operation within a trace (`Step`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// A unique identifier of the step.
    #[serde(default, alias = "stepId", deserialize_with = "null_default")]
    pub step_id: String,
    /// The trace the step belongs to.
    #[serde(default, alias = "traceId", deserialize_with = "null_default")]
    pub trace_id: String,
    /// The parent step; absent for a root step.
    #[serde(
        default,
        alias = "parentStepId",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_step_id: Option<String>,
    /// The kind of operation.
    #[serde(default, alias = "callType", skip_serializing_if = "Option::is_none")]
    pub call_type: Option<CallType>,
    /// What the step did.
    #[serde(default, alias = "stepAction", skip_serializing_if = "Option::is_none")]
    pub step_action: Option<StepAction>,
    /// The cost of the operation.
    #[serde(default, with = "int64", skip_serializing_if = "Option::is_none")]
    pub cost: Option<i64>,
    /// The tokens the operation used.
    #[serde(
        default,
        alias = "totalTokens",
        with = "int64",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_tokens: Option<i64>,
    /// Additional details (a `map<string, string>`).
    #[serde(
        default,
        alias = "additionalAttributes",
        deserialize_with = "null_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub additional_attributes: BTreeMap<String, String>,
    /// The latency of the operation, in milliseconds.
    #[serde(default, with = "int64", skip_serializing_if = "Option::is_none")]
    pub latency: Option<i64>,
    /// When the operation started.
    #[serde(default, alias = "startTime", skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Timestamp>,
    /// When the operation ended.
    #[serde(default, alias = "endTime", skip_serializing_if = "Option::is_none")]
    pub end_time: Option<Timestamp>,
    /// Members the specification does not define (e.g. the reference implementation's `name`,
    /// `step_type`, `error`), kept as received and written back after the others.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
