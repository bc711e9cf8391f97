//! The pipelined multi-level all-reduce ([`crate::collective::Algo::Pipelined`]): a
//! hierarchical all-reduce over up to three levels of the rank space, cut into chunks that
//! flow through the levels as a pipeline, in two lanes that visit the levels in different
//! orders, so that every group of links a chip has carries traffic at once.
//!
//! **Ranks and levels.** `n = k x m` ranks, `k = per_server` to a server (ranks `s x k ..` on
//! server `s`). When `m` is even the servers pair up, server `s` with server `s + m / 2` (on the
//! switched presets those are the servers the direct links join: chip `c` and chip `c + n /
//! 2`). A rank has three coordinates, one per level:
//!
//! | level | coordinate | size | peers | links on trn3-gen2-nl72x2 |
//! |---|---|---|---|---|
//! | `SERVER` | chip within the server, `r mod k` | `k` | its server mates | 4 intra-server + 5 planes |
//! | `PAIR` | which server of the pair | 2 (1 when `m` is odd) | the same chip of the paired server | 2 direct |
//! | `ACROSS` | server within its half | `m / 2` (`m` when odd) | the same chip of the other servers of its half | 5 planes |
//!
//! A level of size 1 is skipped. A reduce-scatter visits the levels in a lane's order (a
//! *route*): at each level a rank sends its peers, in one step, the part of what it holds
//! that is theirs (as the direct all-reduce does: `size(level) - 1` messages) and keeps its
//! own part, reduced; after the last level it holds one fully reduced `1 / n` piece. The
//! all-gather then visits the levels in reverse order, sending what it holds to every peer.
//! Each rank sends `2 (n - 1) / n` of the buffer: the minimum.
//!
//! **Pipeline.** The buffer is cut into `C` chunks ([`chunks`]); chunk `c` runs its stage
//! `s` (`0 .. 2L` for `L` levels) in step `c + s`: `C + 2L - 1` steps, each carrying up to `2L`
//! stages of different chunks, so the server, pair and across levels move data in the same
//! step instead of one after the other. A step's messages to one peer are merged into one.
//!
//! **Lanes.** Lane A takes `SERVER, PAIR, ACROSS`, lane B `PAIR, SERVER, ACROSS`, and lane B
//! carries [`LANE_B_SHARE`] of the data. Lane A puts `2 x 1/8` of its data on the pair level
//! (when `k = 4`), lane B `2 x 1/2`: the mix sets how much goes over the direct links against
//! the switched ones (see the constant). When the pair or the server level is absent, only
//! lane A runs.
//!
//! **Issue order.** Within a step a rank sends to its `ACROSS` peers first, then its `PAIR`
//! peer, then its `SERVER` mates: the network places every packet of a message on the link
//! that frees first when the message is sent, so traffic that can take only the inter-server
//! planes claims them before traffic to server mates, which can also take the intra-server
//! switch, fills in around it.
//!
//! Tests check the plan's data flow symbolically: every rank ends with every piece of every
//! chunk reduced over all ranks, each contribution counted once
//! (`collective::tests::pipelined_*`).

use crate::collective::schedule::{Program, Step};

/// The server level (coordinate: chip within the server).
pub const SERVER: usize = 0;
/// The pair level (coordinate: which server of a pair).
pub const PAIR: usize = 1;
/// The across level (coordinate: server within its half).
pub const ACROSS: usize = 2;

/// The order in which a rank issues a step's messages, by level.
const ISSUE_ORDER: [usize; 3] = [ACROSS, PAIR, SERVER];

/// The pipeline's chunk count is about `sqrt(size / CHUNK_BYTES)`: more chunks overlap the
/// levels better and shorten the pipeline's fill and drain, fewer pay fewer steps of software
/// overhead. Tuned by simulation on trn3-gen2-nl72x2 (an estimate; 64 KiB .. 8 MiB tried, see
/// docs/fabric.md): 1 GiB runs in 32 chunks, 16 MiB in 4, 1 MiB in 1.
pub const CHUNK_BYTES: u64 = 1 << 20;

/// At most this many chunks (keeps programs small for any size).
pub const MAX_CHUNKS: u64 = 1024;

/// The share of the data lane B (pair level first) carries, as (numerator, denominator).
/// With `k = 4` and every level present, per unit of data lane A puts 1.5 on the server
/// level, 0.25 on the pair level and ~0.24 across; lane B 0.75, 1.0 and ~0.24. On
/// trn3-gen2-nl72x2 the server and across levels share 9 links (4 intra-server, 5 planes)
/// and the pair level has 2, which balance at a lane-B share of ~0.15 (an estimate: tuned
/// by simulation, see docs/fabric.md).
pub const LANE_B_SHARE: (u64, u64) = (1, 7);

/// The coordinates' sizes: chips per server, halves (2 when servers pair up, else 1),
/// servers per half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Sizes of the levels, indexed by [`SERVER`], [`PAIR`], [`ACROSS`].
    pub sizes: [usize; 3],
}

impl Shape {
    /// The shape of `n` ranks with `per_server` to a server.
    pub fn new(n: usize, per_server: usize) -> Result<Shape, String> {
        let k = per_server.max(1);
        if n < 2 {
            return Err(format!("a collective needs at least 2 chips, got {n}"));
        }
        if !n.is_multiple_of(k) {
            return Err(format!("pipelined: {n} ranks do not fill servers of {k}"));
        }
        let m = n / k;
        let halves = if m.is_multiple_of(2) { 2 } else { 1 };
        Ok(Shape { sizes: [k, halves, m / halves] })
    }

    /// Ranks.
    pub fn n(&self) -> usize {
        self.sizes.iter().product()
    }

    /// The coordinates of rank `r`.
    pub fn coords(&self, r: usize) -> [usize; 3] {
        let [k, _, g] = self.sizes;
        let s = r / k;
        [r % k, s / g, s % g]
    }

    /// The rank with coordinates `c`.
    pub fn rank(&self, c: [usize; 3]) -> usize {
        let [k, _, g] = self.sizes;
        c[SERVER] + k * (c[ACROSS] + g * c[PAIR])
    }

    /// Rank `r` with its coordinate at `level` set to `x`.
    pub fn peer(&self, r: usize, level: usize, x: usize) -> usize {
        let mut c = self.coords(r);
        c[level] = x;
        self.rank(c)
    }
}

/// One lane: the levels in the order its reduce-scatter visits them (levels of size 1
/// left out) and the bytes of one of its pieces (a chunk of the lane is `n` pieces).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// Levels, reduce-scatter order.
    pub route: Vec<usize>,
    /// Bytes of one piece.
    pub piece_bytes: u64,
}

/// A stage of a lane: the level its messages cross, whether the receiver reduces (the
/// reduce-scatter) or copies (the all-gather), and how many pieces go to each peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The level.
    pub level: usize,
    /// Reduce-scatter (true) or all-gather (false).
    pub reduce: bool,
    /// Pieces per message.
    pub pieces: usize,
}

/// The whole schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The rank space.
    pub shape: Shape,
    /// Lane A, then lane B if it runs.
    pub lanes: Vec<Lane>,
    /// Chunks per lane.
    pub chunks: usize,
}

/// The pipeline's chunk count for `size` bytes: `round(sqrt(size / CHUNK_BYTES))`, at least 1,
/// at most [`MAX_CHUNKS`].
pub fn chunks(size: u64) -> u64 {
    ((size as f64 / CHUNK_BYTES as f64).sqrt().round() as u64).clamp(1, MAX_CHUNKS)
}

impl Plan {
    /// The plan for `n` ranks, `per_server` to a server, and `size` bytes per rank.
    pub fn new(n: usize, size: u64, per_server: usize) -> Result<Plan, String> {
        let shape = Shape::new(n, per_server)?;
        let c = chunks(size);
        let present = |l: usize| shape.sizes[l] > 1;
        let route_a: Vec<usize> = [SERVER, PAIR, ACROSS].into_iter().filter(|&l| present(l)).collect();
        let two_lanes = present(SERVER) && present(PAIR);
        let (b_num, den) = if two_lanes { LANE_B_SHARE } else { (0, 1) };
        // A piece of a lane with share num / den: ceil(size x num / (den x C x n)).
        let piece = |num: u64| {
            let p = (u128::from(size) * u128::from(num)).div_ceil(u128::from(den) * u128::from(c) * n as u128);
            u64::try_from(p).unwrap_or(u64::MAX)
        };
        let mut lanes = vec![Lane { route: route_a, piece_bytes: piece(den - b_num) }];
        if two_lanes {
            let route_b = [PAIR, SERVER, ACROSS].into_iter().filter(|&l| present(l)).collect();
            lanes.push(Lane { route: route_b, piece_bytes: piece(b_num) });
        }
        Ok(Plan { shape, lanes, chunks: c as usize })
    }

    /// Levels each lane visits.
    pub fn levels(&self) -> usize {
        self.lanes[0].route.len()
    }

    /// Steps of every rank's program: `chunks + 2 x levels - 1`.
    pub fn steps(&self) -> usize {
        self.chunks + 2 * self.levels() - 1
    }

    /// Stage `s` (`0 .. 2 x levels`) of lane `lane`.
    pub fn stage(&self, lane: usize, s: usize) -> Stage {
        let route = &self.lanes[lane].route;
        let l = route.len();
        let (reduce, depth) = if s < l { (true, s) } else { (false, 2 * l - 1 - s) };
        let held: usize = route[..=depth].iter().map(|&x| self.shape.sizes[x]).product();
        Stage { level: route[depth], reduce, pieces: self.shape.n() / held }
    }

    /// The (lane, stage, chunk) triples active in step `t`.
    pub fn active(&self, t: usize) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let stages = 2 * self.levels();
        (0..self.lanes.len()).flat_map(move |lane| {
            (0..stages).filter(move |&s| t >= s && t - s < self.chunks).map(move |s| (lane, s, t - s))
        })
    }

    /// The pieces (ids `0 .. n`, piece `p` with coordinates `shape.coords(p)`) rank `src`
    /// sends to `dst` in stage `s` of lane `lane` (for checks; `dst` must be `src`'s peer at
    /// the stage's level). In the reduce-scatter, the pieces that match `src` on the levels
    /// already visited and `dst` on this one; in the all-gather, those matching `src` on this
    /// level and the ones before it.
    pub fn pieces(&self, lane: usize, s: usize, src: usize, dst: usize) -> Vec<usize> {
        let route = &self.lanes[lane].route;
        let l = route.len();
        let (reduce, depth) = if s < l { (true, s) } else { (false, 2 * l - 1 - s) };
        let (cs, cd) = (self.shape.coords(src), self.shape.coords(dst));
        (0..self.shape.n())
            .filter(|&p| {
                let cp = self.shape.coords(p);
                route[..depth].iter().all(|&x| cp[x] == cs[x])
                    && cp[route[depth]] == if reduce { cd[route[depth]] } else { cs[route[depth]] }
            })
            .collect()
    }

    /// Every rank's program: in step `t`, to each peer of each level, the merged bytes of the
    /// active stages at that level, in [`ISSUE_ORDER`]; a step waits for one message from
    /// each peer it sends to.
    pub fn programs(&self) -> Vec<Program> {
        let n = self.shape.n();
        let mut progs: Vec<Program> = vec![Vec::with_capacity(self.steps()); n];
        for t in 0..self.steps() {
            let mut bytes = [0u64; 3];
            for (lane, s, _) in self.active(t) {
                let st = self.stage(lane, s);
                let b = (st.pieces as u64).saturating_mul(self.lanes[lane].piece_bytes);
                bytes[st.level] = bytes[st.level].saturating_add(b);
            }
            let peers: u32 =
                ISSUE_ORDER.iter().filter(|&&l| bytes[l] > 0).map(|&l| self.shape.sizes[l] as u32 - 1).sum();
            for (r, prog) in progs.iter_mut().enumerate() {
                let c = self.shape.coords(r);
                let mut sends = Vec::with_capacity(peers as usize);
                for &l in ISSUE_ORDER.iter().filter(|&&l| bytes[l] > 0) {
                    let size = self.shape.sizes[l];
                    sends.extend((1..size).map(|o| (self.shape.peer(r, l, (c[l] + o) % size), bytes[l])));
                }
                prog.push(Step { sends, recvs: peers });
            }
        }
        progs
    }
}

/// The programs of the pipelined all-reduce (see the module docs); the registry's builder.
pub fn programs(n: usize, size: u64, per_server: usize) -> Result<Vec<Program>, String> {
    Ok(Plan::new(n, size, per_server)?.programs())
}
