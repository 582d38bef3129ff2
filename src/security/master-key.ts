import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';

/** AES-256-GCM as sealed here: a 96-bit IV and a 128-bit tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The environment variable that holds the master key. */
export const MASTER_KEY_ENV = 'SLUICE_MASTER_KEY';

/**
 * The environment variable that holds the master keys a rotation moves away from (comma-separated):
 * read, never sealed with, so stored secrets sealed under them keep opening until re-sealed.
 */
export const PREVIOUS_MASTER_KEYS_ENV = 'SLUICE_MASTER_KEY_PREVIOUS';

/** A secret sealed with AES-256-GCM: what is stored at rest instead of the secret. */
export interface Sealed {
  /** Always `A256GCM` (a future format gets another name). */
  alg: 'A256GCM';
  /** The id of the master key that sealed it (see `MasterKey.id`): a rotation knows which key opens it. */
  kid: string;
  /** The 12-byte nonce, random for every seal, base64. */
  iv: string;
  /** The 16-byte authentication tag, base64. */
  tag: string;
  /** The ciphertext, base64. */
  ct: string;
}

export class MasterKeyError extends Error {
  override name = 'MasterKeyError';
}

/**
 * The key that encrypts secrets at rest (virtual keys' provider credentials in Redis): 32 bytes from
 * `SLUICE_MASTER_KEY`, as 64 hex digits or 44 characters of base64 (`openssl rand -base64 32`).
 * Each seal draws a fresh random 96-bit IV, so one key may seal up to 2^32 values (NIST SP 800-38D);
 * the associated data (the record's id) binds a ciphertext to its record, so it cannot be moved to
 * another one. `id` is a non-secret fingerprint (a hash of the key, never the key), kept with each
 * sealed value.
 */
export class MasterKey {
  readonly id: string;
  readonly #key: Buffer;

  private constructor(key: Buffer) {
    this.#key = key;
    this.id = hash('sha256', Buffer.concat([Buffer.from('sluice master key id\0'), key]), 'hex').slice(0, 16);
  }

  /** Parses the environment's text; throws a MasterKeyError naming the variable (never the value). */
  static parse(text: string, variable: string = MASTER_KEY_ENV): MasterKey {
    const t = text.trim();
    let key: Buffer | undefined;
    if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
    else if (/^[A-Za-z0-9+/]{43}=?$/.test(t) || /^[A-Za-z0-9_-]{43}=?$/.test(t)) key = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
    if (key?.length !== 32) {
      throw new MasterKeyError(`${variable} must be 32 bytes as 64 hex digits or 44 characters of base64 (e.g. \`openssl rand -base64 32\`)`);
    }
    return new MasterKey(key);
  }

  /** A new random key (tests, and the text an operator would put in the environment). */
  static generate(): { key: MasterKey; text: string } {
    const b = randomBytes(32);
    return { key: new MasterKey(b), text: b.toString('base64') };
  }

  seal(plaintext: string, aad: string): Sealed {
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    c.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return { alg: 'A256GCM', kid: this.id, iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64'), ct: ct.toString('base64') };
  }

  /** The plaintext; throws when the value was sealed by another key, for other associated data, or altered. */
  open(s: Sealed, aad: string): string {
    if (s.alg !== 'A256GCM') throw new MasterKeyError(`sealed with an unknown algorithm "${String(s.alg)}"`);
    if (s.kid !== this.id) throw new MasterKeyError(`sealed with master key ${s.kid}; ${MASTER_KEY_ENV} is key ${this.id}`);
    const iv = Buffer.from(s.iv, 'base64');
    const tag = Buffer.from(s.tag, 'base64');
    const notOpening = (): MasterKeyError => new MasterKeyError('the sealed value does not open (altered, or sealed for another record)');
    // The full 16-byte tag and 12-byte IV that seal() writes, nothing shorter: Node would accept a
    // tag cut to 4 bytes (authTagLength below refuses it too), which makes a forged value a matter of
    // 2^32 tries.
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw notOpening();
    try {
      const d = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      d.setAAD(Buffer.from(aad, 'utf8'));
      d.setAuthTag(tag);
      return Buffer.concat([d.update(Buffer.from(s.ct, 'base64')), d.final()]).toString('utf8');
    } catch {
      throw notOpening();
    }
  }

  /** Never the key. */
  toJSON(): string {
    return `MasterKey(${this.id})`;
  }
}

/** What seals and opens stored secrets: a master key, or a keyring during a rotation. */
export interface SecretSealer {
  /** The id of the key new seals are made with. */
  readonly id: string;
  seal(plaintext: string, aad: string): Sealed;
  open(s: Sealed, aad: string): string;
}

/**
 * The master key and, during a rotation, the previous ones: seals with the current key
 * (`SLUICE_MASTER_KEY`) only, opens a value with whichever key its `kid` names (the current one, or
 * one of `SLUICE_MASTER_KEY_PREVIOUS`). Stored secrets sealed under a previous key keep serving until
 * `sluice rotate-master-key` has re-sealed them under the current one; then the previous keys can go.
 */
export class MasterKeyring implements SecretSealer {
  readonly #byId = new Map<string, MasterKey>();

  constructor(
    readonly current: MasterKey,
    readonly previous: readonly MasterKey[] = [],
  ) {
    for (const k of previous) this.#byId.set(k.id, k);
    this.#byId.set(current.id, current);
  }

  /** From the environment's text: the current key and a comma-separated list of previous ones (empty entries ignored). */
  static parse(current: string, previous: string | undefined): MasterKeyring {
    const old = (previous ?? '')
      .split(',')
      .filter((t) => t.trim() !== '')
      .map((t) => MasterKey.parse(t, PREVIOUS_MASTER_KEYS_ENV));
    return new MasterKeyring(MasterKey.parse(current), old);
  }

  get id(): string {
    return this.current.id;
  }

  /** The ids of the previous keys (those this keyring reads and does not seal with). */
  get previousIds(): string[] {
    return this.previous.map((k) => k.id).filter((id) => id !== this.current.id);
  }

  seal(plaintext: string, aad: string): Sealed {
    return this.current.seal(plaintext, aad);
  }

  open(s: Sealed, aad: string): string {
    const key = this.#byId.get(s.kid);
    if (!key) {
      const old = this.previousIds;
      const also = old.length === 0 ? `no ${PREVIOUS_MASTER_KEYS_ENV} is set` : `${PREVIOUS_MASTER_KEYS_ENV} holds ${old.join(', ')}`;
      throw new MasterKeyError(`sealed with master key ${s.kid}; ${MASTER_KEY_ENV} is key ${this.current.id} and ${also}`);
    }
    return key.open(s, aad);
  }

  /** Never a key. */
  toJSON(): string {
    return `MasterKeyring(${[this.current.id, ...this.previousIds].join(', ')})`;
  }
}
