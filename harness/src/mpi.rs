//! The MPI transport for partitioned runs across processes (feature `mpi`):
//! `mpirun -np N trnsim run --mpi NAME`. Each rank runs partition `rank` of the system; rank 0
//! prints the merged results.
//!
//! Per window two collectives: `MPI_Allgather` of every rank's summary words plus the byte
//! counts it sends to each rank, then `MPI_Alltoallv` of the bytes (the kernel's
//! [`Transport`] contract). A panic on any rank calls `MPI_Abort` so the job ends instead of
//! hanging in `MPI_Finalize` (where a job with a failed rank otherwise waits forever).

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;
use trnsim_kernel::Transport;

/// MPI_COMM_WORLD as a [`Transport`].
pub struct MpiTransport {
    world: SimpleCommunicator,
    size: u32,
    rank: u32,
    gather_in: Vec<u64>,
    gather_out: Vec<u64>,
    send: Vec<u8>,
    recv: Vec<u8>,
}

/// Starts MPI (once per process) and installs the abort-on-panic hook. Keep the returned
/// universe alive until the end of `main` (dropping it finalizes MPI).
pub fn init() -> Result<(mpi::environment::Universe, MpiTransport), String> {
    let universe = mpi::initialize().ok_or("MPI was already initialized")?;
    let world = universe.world();
    let (size, rank) = (world.size() as u32, world.rank() as u32);
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        prev(info);
        eprintln!("rank {rank}: panic; aborting the MPI job");
        SimpleCommunicator::world().abort(101);
    }));
    let t = MpiTransport {
        world,
        size,
        rank,
        gather_in: Vec::new(),
        gather_out: Vec::new(),
        // Real, distinct allocations even when a window moves nothing: Open MPI refuses an
        // Alltoallv whose send and receive buffers alias, which two empty Vecs (the same
        // dangling pointer) would.
        send: Vec::with_capacity(4096),
        recv: Vec::with_capacity(4096),
    };
    Ok((universe, t))
}

impl MpiTransport {
    /// Ends the whole job with `code` (after an error on this rank, so the others do not wait
    /// for it forever).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Transport for MpiTransport {
    fn size(&self) -> u32 {
        self.size
    }
    fn rank(&self) -> u32 {
        self.rank
    }
    fn exchange(
        &mut self,
        out: &[Vec<u8>],
        words: &[u64],
        inbox: &mut [Vec<u8>],
        all: &mut Vec<u64>,
    ) -> Result<(), String> {
        let n = self.size as usize;
        let w = words.len();
        let stride = w + n;
        // Summary words plus the byte count for each destination, gathered everywhere.
        self.gather_in.clear();
        self.gather_in.extend_from_slice(words);
        for (q, b) in out.iter().enumerate().take(n) {
            self.gather_in.push(if q == self.rank as usize { 0 } else { b.len() as u64 });
        }
        self.gather_out.resize(stride * n, 0);
        self.world.all_gather_into(&self.gather_in[..], &mut self.gather_out[..]);
        all.clear();
        for q in 0..n {
            all.extend_from_slice(&self.gather_out[q * stride..q * stride + w]);
        }
        // The bytes, all to all (skipped, by every rank alike, when no rank sends any).
        let any = (0..n).any(|q| self.gather_out[q * stride + w..(q + 1) * stride].iter().any(|&c| c > 0));
        if !any {
            for ib in inbox.iter_mut() {
                ib.clear();
            }
            return Ok(());
        }
        let count = |v: u64| Count::try_from(v).map_err(|_| "more than 2 GiB in one window".to_string());
        let mut scounts = Vec::with_capacity(n);
        let mut sdispls = Vec::with_capacity(n);
        self.send.clear();
        for (q, b) in out.iter().enumerate().take(n) {
            sdispls.push(count(self.send.len() as u64)?);
            if q != self.rank as usize {
                self.send.extend_from_slice(b);
                scounts.push(count(b.len() as u64)?);
            } else {
                scounts.push(0);
            }
        }
        let mut rcounts = Vec::with_capacity(n);
        let mut rdispls = Vec::with_capacity(n);
        let mut total = 0u64;
        for q in 0..n {
            let c = self.gather_out[q * stride + w + self.rank as usize];
            rdispls.push(count(total)?);
            rcounts.push(count(c)?);
            total += c;
        }
        self.recv.resize(total as usize, 0);
        {
            let s = Partition::new(&self.send[..], &scounts[..], &sdispls[..]);
            let mut r = PartitionMut::new(&mut self.recv[..], &rcounts[..], &rdispls[..]);
            self.world.all_to_all_varcount_into(&s, &mut r);
        }
        for (q, ib) in inbox.iter_mut().enumerate().take(n) {
            ib.clear();
            let (d, c) = (rdispls[q] as usize, rcounts[q] as usize);
            ib.extend_from_slice(&self.recv[d..d + c]);
        }
        Ok(())
    }
}
