//! [`ActivationValue`]: one activated extension's activation value, type-erased.

// Small scalars (flags, counters) are held inline and anything else boxed (a zero-sized value
// in a box is not allocated): ten extensions activated on every request then allocate nothing
// for their values (BENCHMARKS.md, the allocation count of b84afc0).

use std::any::{Any, TypeId};

/// One activation value (not a public API).
#[doc(hidden)]
#[derive(Debug)]
pub enum ActivationValue {
    /// `()`: an extension that keeps nothing per request.
    Unit(()),
    /// A `bool`.
    Bool(bool),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// A `usize`.
    Usize(usize),
    /// An `i64`.
    I64(i64),
    /// Anything else.
    Boxed(Box<dyn Any + Send + Sync>),
}

impl ActivationValue {
    /// Holds `value`.
    pub(crate) fn new<A: Any + Send + Sync>(value: A) -> Self {
        let mut value = Some(value);
        let any: &mut dyn Any = &mut value;
        macro_rules! inline {
            ($($ty:ty => $v:ident),*) => {
                $(if let Some(v) = any.downcast_mut::<Option<$ty>>().and_then(Option::take) {
                    return Self::$v(v);
                })*
            };
        }
        inline!(() => Unit, bool => Bool, u32 => U32, u64 => U64, usize => Usize, i64 => I64);
        match value {
            Some(v) => Self::Boxed(Box::new(v)),
            None => Self::Unit(()),
        }
    }

    /// The value, as a `dyn Any`.
    pub(crate) fn as_any(&self) -> &dyn Any {
        match self {
            Self::Unit(v) => v,
            Self::Bool(v) => v,
            Self::U32(v) => v,
            Self::U64(v) => v,
            Self::Usize(v) => v,
            Self::I64(v) => v,
            Self::Boxed(b) => b.as_ref(),
        }
    }

    /// The value, when it is an `A`. The variant to look at is decided at compile time from
    /// `A` (no jump on the variant in every hook call).
    #[inline(always)]
    pub(crate) fn get_mut<A: 'static>(&mut self) -> Option<&mut A> {
        fn is<A: 'static, B: 'static>() -> bool {
            TypeId::of::<A>() == TypeId::of::<B>()
        }
        macro_rules! variant {
            ($($ty:ty => $v:ident),*) => {
                $(if is::<A, $ty>() {
                    match self {
                        Self::$v(v) => v as &mut dyn Any,
                        _ => return None,
                    }
                } else)* {
                    match self {
                        Self::Boxed(b) => b.as_mut(),
                        _ => return None,
                    }
                }
            };
        }
        let any: &mut dyn Any =
            variant!(() => Unit, bool => Bool, u32 => U32, u64 => U64, usize => Usize, i64 => I64);
        any.downcast_mut::<A>()
    }
}

#[cfg(test)]
mod tests {
    use super::ActivationValue;

    fn round_trip<A: std::any::Any + Send + Sync + Clone + PartialEq + std::fmt::Debug>(
        value: A,
        inline: bool,
    ) {
        let mut slot = ActivationValue::new(value.clone());
        assert_eq!(
            !matches!(slot, ActivationValue::Boxed(_)),
            inline,
            "{value:?}"
        );
        assert_eq!(slot.as_any().downcast_ref::<A>(), Some(&value));
        assert!(slot.as_any().downcast_ref::<[u8; 3]>().is_none());
        assert_eq!(slot.get_mut::<A>(), Some(&mut value.clone()));
        assert!(slot.get_mut::<[u8; 3]>().is_none());
    }

    #[test]
    fn activation_values_keep_their_type_small_scalars_inline() {
        round_trip(true, true);
        round_trip(7u32, true);
        round_trip(u64::MAX, true);
        round_trip(3usize, true);
        round_trip(-5i64, true);
        round_trip(9u8, false);
        round_trip(Some(7u32), false);
        round_trip((), true);
        round_trip(String::from("x"), false);
        round_trip(vec![1u32, 2], false);
    }
}
