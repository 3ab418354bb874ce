//! [`ExtensionOptions`]: the operator's configuration of one extension, handed to its
//! [`init`](super::ExtensionHooks::init) once, when the server (or client) is built.

use std::any::Any;

use crate::error::A2aError;
use crate::protocol::Side;

/// The configuration an operator gives an extension when adding it to a server
/// ([`A2aServerBuilder::extension_with`](crate::server::A2aServerBuilder::extension_with)), read
/// by its [`init`](super::ExtensionHooks::init).
///
/// An extension's fields are its params, published on the agent card; options are what is not
/// published: keys, paths, limits, clients of other services. They are any type the extension
/// documents, given once and read back typed.
///
/// ```
/// use a2a_runtime::a2a_extension;
/// use a2a_runtime::extension::{ExtensionHooks, ExtensionOptions};
/// use a2a_runtime::A2aError;
/// use serde::{Deserialize, Serialize};
///
/// /// Signs results with the operator's key.
/// #[a2a_extension(uri = "https://example.com/ext/signed/v1")]
/// #[derive(Default, Serialize, Deserialize)]
/// struct Signed {
///     #[serde(skip)]
///     key: Vec<u8>,
/// }
///
/// /// What `Signed` needs from the operator.
/// struct SigningKey(Vec<u8>);
///
/// impl ExtensionHooks for Signed {
///     type Activation = ();
///
///     fn init(&mut self, options: &ExtensionOptions) -> Result<(), A2aError> {
///         let SigningKey(key) = options.require::<Signed, SigningKey>()?;
///         if key.len() < 32 {
///             return Err(A2aError::Internal("the signing key is shorter than 32 bytes".into()));
///         }
///         self.key = key.clone();
///         Ok(())
///     }
/// }
///
/// let options = ExtensionOptions::new(SigningKey(vec![7; 32]));
/// let mut signed = Signed::default();
/// signed.init(&options).unwrap();
/// assert!(Signed::default().init(&ExtensionOptions::none()).is_err());
/// ```
#[derive(Default)]
pub struct ExtensionOptions {
    value: Option<Box<dyn Any + Send + Sync>>,
    side: Side,
}

impl std::fmt::Debug for ExtensionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionOptions")
            .field("given", &self.value.is_some())
            .field("side", &self.side)
            .finish()
    }
}

impl ExtensionOptions {
    /// Options holding `value`.
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        Self {
            value: Some(Box::new(value)),
            side: Side::Server,
        }
    }

    /// No options (what an extension added without any gets).
    pub fn none() -> Self {
        Self::default()
    }

    /// The options, when they were given and are a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.value.as_deref()?.downcast_ref::<T>()
    }

    /// The options as a `T`, or an error naming extension `E` and the type it expected (for
    /// an `init` that cannot work without them).
    pub fn require<E: super::Extension, T: Any>(&self) -> Result<&T, A2aError> {
        self.get::<T>().ok_or_else(|| {
            let given = if self.value.is_some() {
                "options of another type were given"
            } else {
                "none were given"
            };
            A2aError::Internal(format!(
                "extension {} needs options of type {}: {given}; add it with .extension_with(value, options)",
                E::URI,
                std::any::type_name::<T>(),
            ))
        })
    }

    /// Where the extension is being built: in a server, or in a client.
    pub fn side(&self) -> Side {
        self.side
    }

    /// The same options, for an extension built on `side`.
    pub(crate) fn on(mut self, side: Side) -> Self {
        self.side = side;
        self
    }
}
