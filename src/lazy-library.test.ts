import { describe, expect, it } from 'vitest';
import { LazyLibrary } from './lazy-library.js';

describe('LazyLibrary', () => {
  it('imports nothing until load(), then once for every caller, concurrent ones too', async () => {
    let imports = 0;
    const library = { Thing: class Thing {} };
    const lazy = new LazyLibrary('thing', async () => (imports++, library));
    expect(imports).toBe(0);
    expect(lazy.ifLoaded).toBeNull();
    const [a, b] = await Promise.all([lazy.load(), lazy.load()]);
    expect(a).toBe(library);
    expect(b).toBe(library);
    expect(await lazy.load()).toBe(library);
    expect(imports).toBe(1);
    expect(lazy.ifLoaded).toBe(library);
    expect(lazy.get()).toBe(library);
  });

  it('get() before a load throws, naming the library', () => {
    const lazy = new LazyLibrary('some-package', async () => ({}));
    expect(() => lazy.get()).toThrow(/some-package is used before it was loaded/);
  });

  it('a failed import is tried again at the next load()', async () => {
    let attempts = 0;
    const lazy = new LazyLibrary('flaky', async () => {
      if (++attempts === 1) throw new Error('cannot find module');
      return { ok: true };
    });
    await expect(lazy.load()).rejects.toThrow('cannot find module');
    expect(lazy.ifLoaded).toBeNull();
    expect(await lazy.load()).toEqual({ ok: true });
    expect(attempts).toBe(2);
  });

  it('instanceOf is false before the load (no instance can exist), then tells the class apart', async () => {
    class Thing {}
    class Other {}
    const lazy = new LazyLibrary('thing', async () => ({ Thing, Other }));
    const made = new Thing();
    expect(lazy.instanceOf(made, (lib) => lib.Thing)).toBe(false);
    await lazy.load();
    expect(lazy.instanceOf(made, (lib) => lib.Thing)).toBe(true);
    expect(lazy.instanceOf(made, (lib) => lib.Other)).toBe(false);
    expect(lazy.instanceOf('not an object', (lib) => lib.Thing)).toBe(false);
  });
});
