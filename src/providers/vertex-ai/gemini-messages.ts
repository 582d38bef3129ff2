import { GatewayError } from '../../errors/gateway-error.js';

/** OpenAI chat messages → Gemini's systemInstruction and contents (user/model turns). */

export type Json = Record<string, unknown>;
type Part = Json;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

export const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_request_body', message, { param });

const MIME_BY_EXT: Readonly<Record<string, string>> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic',
  heif: 'image/heif', pdf: 'application/pdf', mp3: 'audio/mpeg', wav: 'audio/wav', mp4: 'video/mp4',
};

/** `data:<mime>;base64,<b64>` → inlineData; an http(s) or gs:// URL → fileData. */
function urlPart(url: unknown, param: string): Part {
  if (typeof url !== 'string' || url === '') throw bad(param, `${param} must be a URL string.`);
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const meta = url.slice(5, comma);
    if (comma < 0 || !meta.endsWith(';base64')) throw bad(param, `${param} must be a base64 data URL (data:<mime>;base64,...).`);
    return { inlineData: { mimeType: meta.slice(0, -7) || 'application/octet-stream', data: url.slice(comma + 1) } };
  }
  if (/^(https?|gs):\/\//.test(url)) {
    const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
    const mimeType = (ext && MIME_BY_EXT[ext]) ?? 'image/jpeg';
    return { fileData: { mimeType, fileUri: url } };
  }
  throw bad(param, `${param} must be a data:, https:// or gs:// URL.`);
}

/** OpenAI content (string or parts) → Gemini parts. */
function contentParts(content: unknown, param: string, textOnly: boolean): Part[] {
  if (content == null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const out: Part[] = [];
  (content as unknown[]).forEach((p, j) => {
    const at = `${param}[${j}]`;
    const part = p as Json;
    const type = part?.type;
    if ((type === 'text' || type === 'refusal') && typeof (part.text ?? part.refusal) === 'string') {
      const text = (part.text ?? part.refusal) as string;
      if (text !== '') out.push({ text });
      return;
    }
    if (!textOnly && type === 'image_url') {
      out.push(urlPart((part.image_url as Json | undefined)?.url, `${at}.image_url.url`));
      return;
    }
    if (!textOnly && type === 'input_audio') {
      const a = part.input_audio as Json | undefined;
      if (typeof a?.data !== 'string') throw bad(`${at}.input_audio.data`, `${at}.input_audio.data must be base64 audio.`);
      out.push({ inlineData: { mimeType: a.format === 'mp3' ? 'audio/mpeg' : 'audio/wav', data: a.data } });
      return;
    }
    if (!textOnly && type === 'file' && typeof (part.file as Json | undefined)?.file_data === 'string') {
      out.push(urlPart((part.file as Json).file_data, `${at}.file.file_data`));
      return;
    }
    throw bad(`${at}.type`, `vertex-ai does not take a content part of type ${JSON.stringify(type)} here (${at}).`);
  });
  return out;
}

function parseArgs(args: unknown, param: string): Json {
  if (args === undefined || args === '') return {};
  try {
    const v: unknown = JSON.parse(args as string);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Json;
  } catch {
    // fall through
  }
  throw bad(param, `${param} must be a JSON object in a string.`);
}

/** A tool result → the object Gemini's functionResponse.response needs. */
function responseOf(content: unknown, param: string): Json {
  const parts = contentParts(content, param, true);
  return { content: parts.map((p) => p.text as string).join('') };
}

interface Contents {
  system: Part[];
  contents: Content[];
}

/** messages[] → systemInstruction parts and user/model turns (consecutive same-role turns merged). */
export function translateMessages(messages: unknown[]): Contents {
  const system: Part[] = [];
  const contents: Content[] = [];
  /** tool_call_id → function name, from the assistant turns seen so far (the latest wins). */
  const callNames = new Map<string, string>();
  const push = (role: Content['role'], parts: Part[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  messages.forEach((raw, i) => {
    const m = raw as Json;
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...contentParts(m.content, `${at}.content`, true));
        return;
      case 'user':
        push('user', contentParts(m.content, `${at}.content`, false));
        return;
      case 'assistant': {
        const parts = contentParts(m.content, `${at}.content`, true);
        const calls = m.tool_calls as Json[] | undefined;
        if (Array.isArray(calls)) {
          calls.forEach((c, j) => {
            const fn = c?.function as Json | undefined;
            if (typeof fn?.name !== 'string') throw bad(`${at}.tool_calls[${j}].function.name`, `${at}.tool_calls[${j}].function.name must be a string.`);
            if (typeof c.id === 'string') callNames.set(c.id, fn.name);
            parts.push({ functionCall: { name: fn.name, args: parseArgs(fn.arguments, `${at}.tool_calls[${j}].function.arguments`) } });
          });
        }
        const legacy = m.function_call as Json | undefined;
        if (legacy && typeof legacy.name === 'string') {
          parts.push({ functionCall: { name: legacy.name, args: parseArgs(legacy.arguments, `${at}.function_call.arguments`) } });
        }
        push('model', parts);
        return;
      }
      case 'tool': {
        const id = m.tool_call_id;
        const name = typeof id === 'string' ? callNames.get(id) : undefined;
        if (name === undefined) {
          throw bad(`${at}.tool_call_id`, `${at}.tool_call_id names no tool call of an earlier assistant message (Gemini needs the function's name).`);
        }
        push('user', [{ functionResponse: { name, response: responseOf(m.content, `${at}.content`) } }]);
        return;
      }
      case 'function':
        if (typeof m.name !== 'string') throw bad(`${at}.name`, `${at}.name must be a string.`);
        push('user', [{ functionResponse: { name: m.name, response: responseOf(m.content, `${at}.content`) } }]);
        return;
      default:
        throw bad(`${at}.role`, `${at}.role ${JSON.stringify(m.role)} is not supported.`);
    }
  });
  return { system, contents };
}
