//! The name of the agent a request's route belongs to, for the `agent` label of its metrics.
//! A leaf: the agents put it on their routes, observation and metrics read it.

use std::sync::Arc;

/// The name of the agent a request's route belongs to (app data of its scope).
#[derive(Clone, Debug)]
pub(crate) struct AgentLabel(Arc<str>);

impl AgentLabel {
    pub(crate) fn new(name: Arc<str>) -> Self {
        Self(name)
    }

    /// The name, as a metrics label value.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn name(&self) -> String {
        self.0.to_string()
    }
}
