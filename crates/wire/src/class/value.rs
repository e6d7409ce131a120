//! The [`Value`] trait implemented by class types, and the shared handles
//! [`ValuePtr`] (any class) and [`ClassRef<T>`] (a `T` or a class derived
//! from `T`).

use std::any::Any;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::slice::SlicedData;
use crate::decoder::Decoder;
use crate::encoder::Encoder;
use crate::error::Result;

/// A Slice class type, usable behind a `dyn Value`. See the
/// [module documentation](crate::class) for how generated code implements it.
pub trait Value: Any + Send + Sync + fmt::Debug {
    /// The Slice type id of the most-derived type (`::M::Derived`).
    fn ice_id(&self) -> &str;

    /// The Slice type ids of this type and its bases, most-derived first.
    ///
    /// Must match [`Value::ice_base`]: every id here belongs to the value
    /// itself or to a base reachable through `ice_base`, because typed views
    /// ([`ClassRef::read`]) are checked by id and then found through
    /// `ice_base`.
    fn ice_ids(&self) -> &'static [&'static str];

    /// Writes this type's slice, then its base's slices
    /// ([`Encoder::start_slice`], members, [`Encoder::end_slice`]).
    fn write_slices(&self, enc: &mut Encoder);

    /// Reads this type's slice, then its base's slices
    /// ([`Decoder::start_slice`], members, [`Decoder::end_slice`]).
    ///
    /// # Errors
    ///
    /// Any decoding error of the members.
    fn read_slices(&mut self, dec: &mut Decoder) -> Result<()>;

    /// The embedded base class, if this class extends another.
    fn ice_base(&self) -> Option<&dyn Value> {
        None
    }

    /// The embedded base class, mutably.
    fn ice_base_mut(&mut self) -> Option<&mut dyn Value> {
        None
    }

    /// Slices of more-derived types that this side does not know, kept from
    /// decoding so that they are written back unchanged (sliced format only).
    fn ice_sliced_data(&self) -> Option<&SlicedData> {
        None
    }

    /// Keeps the unknown slices found while decoding. The default drops them
    /// (no `["preserve-slice"]`).
    fn ice_set_sliced_data(&mut self, sliced: SlicedData) {
        let _ = sliced;
    }

    /// Ice's `ice_preMarshal`: called just before the instance is
    /// encoded, under a write lock, when [`Value::ice_has_pre_marshal`]
    /// says so. The default does nothing; generated classes with
    /// `["rust:hooks"]` call [`super::ValueHooks::ice_pre_marshal`].
    fn ice_pre_marshal(&mut self) {}

    /// Whether the encoder must call [`Value::ice_pre_marshal`] (which
    /// takes the instance's write lock: a caller that holds a read guard
    /// of such an instance while sending it would wait for itself).
    /// `false` by default; `true` for generated classes with
    /// `["rust:hooks"]`.
    fn ice_has_pre_marshal(&self) -> bool {
        false
    }

    /// Ice's `ice_postUnmarshal`: called just after the instance's slices
    /// were decoded (instances it refers to that come later in the
    /// stream may still be empty stand-ins then). The default does
    /// nothing; generated classes with `["rust:hooks"]` call
    /// [`super::ValueHooks::ice_post_unmarshal`].
    fn ice_post_unmarshal(&mut self) {}
}

/// Static facts about a concrete class type, for factories and typed handles.
pub trait ValueType: Value + Default {
    /// The Slice type id (`::M::Derived`).
    const TYPE_ID: &'static str;
    /// The compact type id from `class C(7)`, if any.
    const COMPACT_ID: Option<u32> = None;
}

/// `Self` is a class derived, directly or not, from `B`: generated code
/// implements it for every base of a class, so that
/// [`ClassRef::upcast`] widens without a check.
pub trait Extends<B: ValueType>: ValueType {}

/// Views `value` as a `T`: the value itself or one of its embedded bases.
pub fn upcast_ref<T: Value>(value: &dyn Value) -> Option<&T> {
    let any: &dyn Any = value;
    if let Some(t) = any.downcast_ref::<T>() {
        return Some(t);
    }
    value.ice_base().and_then(upcast_ref::<T>)
}

/// Views `value` as a `T`, mutably.
pub fn upcast_mut<T: Value>(value: &mut dyn Value) -> Option<&mut T> {
    if (value as &dyn Any).is::<T>() {
        let any: &mut dyn Any = value;
        return any.downcast_mut::<T>();
    }
    value.ice_base_mut().and_then(upcast_mut::<T>)
}

/// The size of the shared cell behind a [`ValuePtr`] (for the class-graph
/// memory budget).
pub(crate) const VALUE_CELL_SIZE: usize = std::mem::size_of::<ValueCell>();

/// The shared cell behind a [`ValuePtr`].
struct ValueCell {
    /// The Slice type ids of the instance (most-derived first), readable
    /// without locking; set once, when the decoder knows the type.
    type_ids: OnceLock<&'static [&'static str]>,
    /// The instance. Decoders put a placeholder here while the instance is
    /// being read and swap the real value in when it is complete.
    value: RwLock<Box<dyn Value>>,
}

/// A shared, mutable class instance of any type (Ice's `shared_ptr<Value>`).
///
/// Cloning shares the instance. Equality and hashing are by identity.
/// Cyclic graphs leak unless the application breaks a link.
#[derive(Clone)]
pub struct ValuePtr(Arc<ValueCell>);

impl ValuePtr {
    /// Shares a new instance.
    pub fn new<T: Value>(value: T) -> Self {
        let ids = value.ice_ids();
        Self::with_type_ids(Box::new(value), Some(ids))
    }

    /// Shares a boxed instance.
    pub fn from_box(value: Box<dyn Value>) -> Self {
        let ids = value.ice_ids();
        Self::with_type_ids(value, Some(ids))
    }

    pub(crate) fn with_type_ids(
        value: Box<dyn Value>,
        ids: Option<&'static [&'static str]>,
    ) -> Self {
        let type_ids = OnceLock::new();
        if let Some(ids) = ids {
            let _ = type_ids.set(ids);
        }
        ValuePtr(Arc::new(ValueCell {
            type_ids,
            value: RwLock::new(value),
        }))
    }

    /// A placeholder for an instance whose type is not known yet (decoding).
    pub(crate) fn pending() -> Self {
        Self::with_type_ids(Box::new(PendingValue), None)
    }

    /// Puts the placeholder back (a decoder dropping what it read after an
    /// error, which breaks any cycle through this instance).
    pub(crate) fn clear(&self) {
        self.replace(Box::new(PendingValue));
    }

    /// Makes a placeholder viewable as a `T` (decoding encoding 1.0, where
    /// a typed reference is handed out before its instance arrives): puts a
    /// default `T` in, unless what is there already is a `T` or derives
    /// from it. The instance replaces it when it is read.
    pub(crate) fn stand_in<T: ValueType>(&self) {
        let mut guard = self.lock_write();
        let current: &dyn Value = &**guard;
        if upcast_ref::<T>(current).is_some() {
            return;
        }
        let fresh = T::default();
        if (current as &dyn Any).is::<PendingValue>() || fresh.ice_ids().contains(&current.ice_id())
        {
            *guard = Box::new(fresh);
        }
    }

    /// Records the instance's type ids (decoding, once the type is known).
    pub(crate) fn set_type_ids(&self, ids: &'static [&'static str]) {
        let _ = self.0.type_ids.set(ids);
    }

    /// Replaces the instance (decoding, when it is complete).
    pub(crate) fn replace(&self, value: Box<dyn Value>) {
        *self.lock_write() = value;
    }

    /// Locks the box itself for writing: only the decoder may replace the
    /// instance (typed handles rely on its type staying what it was).
    fn lock_write(&self) -> RwLockWriteGuard<'_, Box<dyn Value>> {
        self.0.value.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the instance for reading. Blocks while a writer holds it.
    pub fn read(&self) -> RwLockReadGuard<'_, Box<dyn Value>> {
        self.0.value.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks the instance for writing. It can be changed in place but not
    /// replaced by an instance of another type, so every
    /// [`ClassRef<T>`] sharing it stays a view of a `T`:
    ///
    /// ```
    /// # use floe_wire::class::{UnknownSlicedValue, Value, ValuePtr};
    /// let p = ValuePtr::new(UnknownSlicedValue::default());
    /// p.write().ice_set_sliced_data(Default::default());
    /// ```
    ///
    /// ```compile_fail
    /// # use floe_wire::class::{UnknownSlicedValue, ValuePtr};
    /// let p = ValuePtr::new(UnknownSlicedValue::default());
    /// *p.write() = Box::new(UnknownSlicedValue::default());
    /// ```
    pub fn write(&self) -> ValueWriteGuard<'_> {
        ValueWriteGuard {
            guard: self.lock_write(),
        }
    }

    /// The Slice type ids of the instance, most-derived first (empty for an
    /// [`UnknownSlicedValue`]), without locking it.
    pub fn type_ids(&self) -> &'static [&'static str] {
        self.0.type_ids.get().copied().unwrap_or(&[])
    }

    /// The instance's type ids if its type is known (not while a decoder is
    /// still looking for it).
    pub(crate) fn known_type_ids(&self) -> Option<&'static [&'static str]> {
        self.0.type_ids.get().copied()
    }

    /// Whether the instance is of the class `type_id` or derives from it.
    pub fn is_a(&self, type_id: &str) -> bool {
        self.type_ids().contains(&type_id)
    }

    /// This instance as a `ClassRef<T>`, if it is a `T`.
    pub fn downcast<T: ValueType>(&self) -> Option<ClassRef<T>> {
        self.is_a(T::TYPE_ID)
            .then(|| ClassRef::from_ptr_unchecked(self.clone()))
    }

    /// Whether both handles share the same instance.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The address of the shared instance, an identity for maps.
    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }
}

impl PartialEq for ValuePtr {
    fn eq(&self, other: &Self) -> bool {
        Self::ptr_eq(self, other)
    }
}

impl Eq for ValuePtr {}

impl Hash for ValuePtr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.addr().hash(state)
    }
}

impl fmt::Debug for ValuePtr {
    /// Prints the type and address only: graphs may be cyclic.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.type_ids().first().copied().unwrap_or("?");
        write!(f, "ValuePtr({id} @ {:#x})", self.addr())
    }
}

/// A shared class instance known to be a `T` (or derived from `T`): the type
/// of class-typed members and parameters (as `Option<ClassRef<T>>`).
///
/// ```
/// # use floe_wire::class::{ClassRef, Value, ValueType};
/// # use floe_wire::{Decoder, Encoder, Result};
/// # #[derive(Debug, Default)] struct Node { v: i32 }
/// # impl ValueType for Node { const TYPE_ID: &'static str = "::M::Node"; }
/// # impl Value for Node {
/// #     fn ice_id(&self) -> &str { Self::TYPE_ID }
/// #     fn ice_ids(&self) -> &'static [&'static str] { &["::M::Node"] }
/// #     fn write_slices(&self, _: &mut Encoder) {}
/// #     fn read_slices(&mut self, _: &mut Decoder) -> Result<()> { Ok(()) }
/// # }
/// let n = ClassRef::new(Node { v: 1 });
/// let shared = n.clone();
/// shared.write().v = 2;
/// assert_eq!(n.read().v, 2);
/// assert!(ClassRef::ptr_eq(&n, &shared));
/// ```
pub struct ClassRef<T> {
    ptr: ValuePtr,
    _type: PhantomData<fn() -> T>,
}

impl<T: ValueType> ClassRef<T> {
    /// Shares a new instance.
    pub fn new(value: T) -> Self {
        Self::from_ptr_unchecked(ValuePtr::new(value))
    }

    /// Invariant: `ptr` holds a `T` (or will, once decoding completes; the
    /// decoder checks deferred cases before returning).
    pub(crate) fn from_ptr_unchecked(ptr: ValuePtr) -> Self {
        ClassRef {
            ptr,
            _type: PhantomData,
        }
    }

    /// Locks the instance for reading and views it as a `T`.
    pub fn read(&self) -> ClassReadGuard<'_, T> {
        ClassReadGuard {
            guard: self.ptr.read(),
            _type: PhantomData,
        }
    }

    /// Locks the instance for writing and views it as a `T`.
    pub fn write(&self) -> ClassWriteGuard<'_, T> {
        ClassWriteGuard {
            guard: self.ptr.lock_write(),
            _type: PhantomData,
        }
    }

    /// The untyped handle.
    pub fn as_ptr(&self) -> &ValuePtr {
        &self.ptr
    }

    /// Gives back the untyped handle.
    pub fn into_ptr(self) -> ValuePtr {
        self.ptr
    }

    /// The most-derived Slice type id of the instance.
    pub fn ice_id(&self) -> &'static str {
        self.ptr.type_ids().first().copied().unwrap_or(T::TYPE_ID)
    }

    /// This instance as a `ClassRef<U>`, if it is a `U`: narrowing a
    /// `ClassRef<Base>` to `ClassRef<Derived>`, or widening (always `Some`)
    /// a `ClassRef<Derived>` to `ClassRef<Base>`.
    pub fn downcast<U: ValueType>(&self) -> Option<ClassRef<U>> {
        self.ptr.downcast::<U>()
    }

    /// This instance as a `ClassRef<B>` of one of its bases (widening
    /// always succeeds; the same instance is shared).
    ///
    /// ```
    /// # use floe_wire::class::{ClassRef, Extends, Value, ValueType};
    /// # use floe_wire::{Decoder, Encoder, Result};
    /// # #[derive(Clone, Debug, Default, PartialEq)]
    /// # struct Base { v: i32 }
    /// # impl ValueType for Base { const TYPE_ID: &'static str = "::M::Base"; }
    /// # impl Value for Base {
    /// #     fn ice_id(&self) -> &str { Self::TYPE_ID }
    /// #     fn ice_ids(&self) -> &'static [&'static str] { &["::M::Base"] }
    /// #     fn write_slices(&self, _: &mut Encoder) {}
    /// #     fn read_slices(&mut self, _: &mut Decoder) -> Result<()> { Ok(()) }
    /// # }
    /// # #[derive(Clone, Debug, Default, PartialEq)]
    /// # struct Derived { base: Base }
    /// # impl ValueType for Derived { const TYPE_ID: &'static str = "::M::Derived"; }
    /// # impl Value for Derived {
    /// #     fn ice_id(&self) -> &str { Self::TYPE_ID }
    /// #     fn ice_ids(&self) -> &'static [&'static str] { &["::M::Derived", "::M::Base"] }
    /// #     fn write_slices(&self, _: &mut Encoder) {}
    /// #     fn read_slices(&mut self, _: &mut Decoder) -> Result<()> { Ok(()) }
    /// #     fn ice_base(&self) -> Option<&dyn Value> { Some(&self.base) }
    /// #     fn ice_base_mut(&mut self) -> Option<&mut dyn Value> { Some(&mut self.base) }
    /// # }
    /// # impl Extends<Base> for Derived {}
    /// let d = ClassRef::new(Derived { base: Base { v: 7 } });
    /// let b: ClassRef<Base> = d.clone().upcast();
    /// assert_eq!(b.read().v, 7);
    /// assert_eq!(b.ice_id(), "::M::Derived");
    /// ```
    pub fn upcast<B: ValueType>(self) -> ClassRef<B>
    where
        T: Extends<B>,
    {
        // A `T` embeds its bases: views of it as a `B` succeed.
        ClassRef::from_ptr_unchecked(self.ptr)
    }

    /// Whether both handles share the same instance.
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        ValuePtr::ptr_eq(&a.ptr, &b.ptr)
    }
}

impl<T> Clone for ClassRef<T> {
    fn clone(&self) -> Self {
        ClassRef {
            ptr: self.ptr.clone(),
            _type: PhantomData,
        }
    }
}

impl<T> PartialEq for ClassRef<T> {
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}

impl<T> Eq for ClassRef<T> {}

impl<T> Hash for ClassRef<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.ptr.hash(state)
    }
}

impl<T> fmt::Debug for ClassRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ptr.fmt(f)
    }
}

impl<T: ValueType> From<ClassRef<T>> for ValuePtr {
    fn from(r: ClassRef<T>) -> Self {
        r.ptr
    }
}

const VIEW_INVARIANT: &str =
    "a ClassRef<T> only exists for instances that are a T (checked when it is created)";

/// A read lock on a class instance, viewed as a `T`.
pub struct ClassReadGuard<'a, T> {
    guard: RwLockReadGuard<'a, Box<dyn Value>>,
    _type: PhantomData<fn() -> T>,
}

impl<T: ValueType> Deref for ClassReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        upcast_ref::<T>(&**self.guard).expect(VIEW_INVARIANT)
    }
}

/// A write lock on a class instance of any type ([`ValuePtr::write`]): a
/// `&mut dyn Value`, through which the instance changes in place but cannot
/// be swapped for one of another type.
pub struct ValueWriteGuard<'a> {
    guard: RwLockWriteGuard<'a, Box<dyn Value>>,
}

impl Deref for ValueWriteGuard<'_> {
    type Target = dyn Value;
    fn deref(&self) -> &(dyn Value + 'static) {
        &**self.guard
    }
}

impl DerefMut for ValueWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut (dyn Value + 'static) {
        &mut **self.guard
    }
}

/// A write lock on a class instance, viewed as a `T`.
pub struct ClassWriteGuard<'a, T> {
    guard: RwLockWriteGuard<'a, Box<dyn Value>>,
    _type: PhantomData<fn() -> T>,
}

impl<T: ValueType> Deref for ClassWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        upcast_ref::<T>(&**self.guard).expect(VIEW_INVARIANT)
    }
}

impl<T: ValueType> DerefMut for ClassWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        upcast_mut::<T>(&mut **self.guard).expect(VIEW_INVARIANT)
    }
}

/// An instance none of whose slices this side knows, decoded from the sliced
/// format. It is written back unchanged.
#[derive(Debug, Default)]
pub struct UnknownSlicedValue {
    /// The most-derived type id (a compact id in decimal if that is what was sent).
    pub type_id: String,
    /// All the slices, most-derived first.
    pub sliced_data: SlicedData,
}

impl Value for UnknownSlicedValue {
    fn ice_id(&self) -> &str {
        &self.type_id
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &[]
    }
    fn write_slices(&self, _enc: &mut Encoder) {
        // The writer writes `sliced_data` before calling this.
    }
    fn read_slices(&mut self, _dec: &mut Decoder) -> Result<()> {
        Ok(())
    }
    fn ice_sliced_data(&self) -> Option<&SlicedData> {
        Some(&self.sliced_data)
    }
    fn ice_set_sliced_data(&mut self, sliced: SlicedData) {
        self.sliced_data = sliced;
    }
}

/// Stands in for an instance while the decoder reads it.
#[derive(Debug)]
struct PendingValue;

impl Value for PendingValue {
    fn ice_id(&self) -> &str {
        "::Ice::Object"
    }
    fn ice_ids(&self) -> &'static [&'static str] {
        &[]
    }
    fn write_slices(&self, _enc: &mut Encoder) {}
    fn read_slices(&mut self, _dec: &mut Decoder) -> Result<()> {
        Ok(())
    }
}
