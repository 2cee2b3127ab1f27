import { describe, expect, it } from 'vitest';
import { API_KEY_SCOPES, DEFAULT_KEY_SCOPE, scopeAllows } from './api-key-scope.js';

describe('scopeAllows', () => {
  it('lets a full key call every method', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) expect(scopeAllows('full', method, false), method).toBe(true);
  });

  it('lets a read key read (GET, HEAD) and nothing else', () => {
    expect(scopeAllows('read', 'GET', false)).toBe(true);
    expect(scopeAllows('read', 'HEAD', false)).toBe(true);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) expect(scopeAllows('read', method, false), method).toBe(false);
  });

  it('lets a read key call a route marked as a read whatever its method', () => {
    expect(scopeAllows('read', 'POST', true)).toBe(true);
  });

  it('makes keys full unless asked otherwise', () => {
    expect(DEFAULT_KEY_SCOPE).toBe('full');
    expect(API_KEY_SCOPES).toStrictEqual(['full', 'read']);
  });
});
