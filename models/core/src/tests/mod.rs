//! Timing and functional tests of a whole core (engines, semaphores, SBUF/PSUM).

mod costs;
mod functional;
mod matmul;
mod sequencer;
