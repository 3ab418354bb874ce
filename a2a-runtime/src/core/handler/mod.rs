//! [`RequestHandler`]: one async method per A2A operation, and [`DefaultRequestHandler`], which
//! implements them over an [`AgentExecutor`](super::AgentExecutor), a
//! [`TaskStore`](crate::store::TaskStore) and a [`PushConfigStore`](crate::store::PushConfigStore).
//!
//! The files, each depending only on those listed before it: `request_handler` (the trait),
//! `default` (the default handler: what it holds, how it is configured), `stream` (the event
//! stream of a task), `repeat` (repeated SendMessage requests answered with their first task),
//! `send` (beginning a task's turn, and a blocking SendMessage's wait),
//! `cancel` (CancelTask), `operations` (the trait's impl for the default handler), `served`
//! (which handler a service dispatches to).

mod cancel;
mod default;
mod operations;
mod repeat;
mod request_handler;
mod send;
mod served;
mod stream;
#[cfg(test)]
mod tests;

pub use default::DefaultRequestHandler;
pub use request_handler::RequestHandler;
pub(crate) use served::ServedHandler;
