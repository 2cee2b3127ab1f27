/**
 * A library loaded at its first use rather than when the server starts (docs/memory.md). The
 * platform clients (`@discordjs/rest`, `@discordjs/ws`, grammY, stripe-node) cost about 10 MiB of
 * heap and 15-20 MiB resident together, and a fresh install connects no bot and no Stripe account:
 * they are imported when a bot is held, a token is checked, a Stripe call or a webhook comes.
 *
 * The modules that use one import its types only (`import type`), and its values through here:
 * - `load()` imports it, once; callers at the same moment share that one import.
 * - `get()` is for sync code that can only run after a load (a bot's client exists, so its library
 *   was loaded to build it); used before, it throws rather than quietly loading nothing.
 * - `instanceOf(err, (lib) => lib.SomeError)` tells its errors apart without loading it: an error of
 *   the library can only exist once it is loaded. `ifLoaded` is the library or null.
 */
export class LazyLibrary<M> {
  private loaded: M | null = null;
  private loading: Promise<M> | null = null;

  constructor(
    /** The package's name, for the error of a `get()` too early. */
    readonly name: string,
    private readonly importer: () => Promise<M>,
  ) {}

  get ifLoaded(): M | null {
    return this.loaded;
  }

  load(): Promise<M> {
    if (this.loaded !== null) return Promise.resolve(this.loaded);
    this.loading ??= this.importer().then(
      (library) => (this.loaded = library),
      (err: unknown) => {
        // A failed import (a broken install) is tried again at the next use, not remembered.
        this.loading = null;
        throw err;
      },
    );
    return this.loading;
  }

  get(): M {
    if (this.loaded === null) throw new Error(`${this.name} is used before it was loaded: await its load() first`);
    return this.loaded;
  }

  /**
   * `value` is an instance of the library's class `pick` names: false while the library is not
   * loaded, when none can exist (the error predicates: `isDiscordApiError`, `isGrammyError`…).
   */
  instanceOf<T>(value: unknown, pick: (library: M) => abstract new (...args: never[]) => T): value is T {
    return this.loaded !== null && value instanceof pick(this.loaded);
  }
}
