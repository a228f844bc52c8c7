//! State that a layer above the server owns (persistence, scripting; later
//! replication and cluster) but that travels with the server, so a command
//! handler reaches it through `Ctx` like everything else. The server layer
//! never names those types: it holds each as an opaque [`Part`], and only
//! its owner reads it back, through a typed accessor of its own. This keeps
//! every import pointing down the layers (see `tests/layering.rs`).
use std::any::Any;

/// One layer's state, typed only for its owner.
pub struct Part(Box<dyn Any>);

impl Part {
    pub fn new<T: Any>(state: T) -> Part {
        Part(Box::new(state))
    }

    /// The owner's state. Panics if `T` is not what the owner stored: a
    /// wiring mistake at start, not something a client can cause.
    #[inline]
    pub fn get<T: Any>(&self) -> &T {
        self.0.downcast_ref().expect("a server part is read as the type its owner stored")
    }

    #[inline]
    pub fn get_mut<T: Any>(&mut self) -> &mut T {
        self.0.downcast_mut().expect("a server part is read as the type its owner stored")
    }
}
