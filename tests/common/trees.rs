//! Shallow trees whose subtree shares are known exactly, for the adaptive-update tests.

/// Vertices of [`heavy_binary_tree`].
pub const HEAVY_TREE_N: usize = 8191;

/// Edge list (`src`, `dst`, weights) of a complete binary tree in heap order (`i -> 2i+1, 2i+2`,
/// weight 1) of 8191 vertices, except that the edge into `heavy` weighs 1000, plus a spare edge
/// `2 -> 1` of weight 2000 (never a tree edge).
pub fn heavy_binary_tree(heavy: usize) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let (mut src, mut dst, mut w) = (vec![], vec![], vec![]);
    for i in 0..HEAVY_TREE_N {
        for c in [2 * i + 1, 2 * i + 2] {
            if c < HEAVY_TREE_N {
                src.push(i as i32);
                dst.push(c as i32);
                w.push(if c == heavy { 1000 } else { 1 });
            }
        }
    }
    src.push(2);
    dst.push(1);
    w.push(2000);
    (src, dst, w)
}
