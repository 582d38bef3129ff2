/** A response body parsed as JSON, or undefined when it is not JSON (an SSE stream, an HTML page). */
export function jsonOrUndefined(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
