/**
 * `compute(key)` once per key object, kept as long as the key lives. Plans are compiled once per
 * config and cached, so whatever is derived from a plan node is derived here, not per request.
 */
export function memoByObject<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const cache = new WeakMap<K, V>();
  return (key) => {
    let v = cache.get(key);
    if (v === undefined && !cache.has(key)) {
      v = compute(key);
      cache.set(key, v);
    }
    return v as V;
  };
}
