/**
 * Embedding vectors for the semantic cache, behind a port. A partition groups the entries that may
 * match each other (model, provider identity, namespace). Search returns the most similar entry whose
 * cosine similarity is at least `threshold`, or undefined.
 */
export interface VectorMatch {
  id: string;
  score: number;
}

export interface VectorIndex {
  readonly kind: 'memory' | 'redis';
  add(partition: string, id: string, vector: Float32Array, ttlSeconds: number): Promise<void>;
  search(partition: string, vector: Float32Array, threshold: number): Promise<VectorMatch | undefined>;
  /** Entries held (all partitions), for metrics and tests. */
  size(): number;
}
