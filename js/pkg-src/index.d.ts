// Types of the purehdf npm package (index.js).

/** Errors thrown by the package: the library's message and a kind. */
export interface PurehdfError extends Error {
  kind: 'NotFound' | 'InvalidArgument' | 'Conversion' | 'Unsupported' | 'Limit' | 'Remote'
    | 'StaleSnapshot' | 'Corrupt' | 'Medh5' | 'NeedBytes';
}

export type Values =
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array
  | BigInt64Array | BigUint64Array | Float32Array | Float64Array | any[];

export interface Metadata {
  class: string;
  size: number;
  dtype: string;
  signed?: boolean;
  littleEndian?: boolean;
  cset?: string;
  vlen?: boolean;
  members?: { name: string; offset: number; type: Metadata }[];
  base?: Metadata;
  dims?: number[];
  enumMembers?: Record<string, number>;
}

export interface Attribute {
  name: string;
  shape: number[] | null;
  dtype: string;
  metadata: Metadata;
  value: any;
}

export interface Link {
  name: string;
  type: 'hard' | 'soft' | 'external' | 'user';
  target: number | string;
  file?: string;
}

export interface Filter { id: number; name: string; cd_values: number[] }

export interface Progress { done: number; total: number; bytesFetched: number; requests: number; rounds: number }

export interface OpenOptions {
  onProgress?: (p: Progress) => void;
  fetch?: typeof fetch;
}

export type Source = ArrayBuffer | ArrayBufferView | Blob | string | URL;
/** One axis of a selection: [] all, [i] one index, [start, stop] or [start, stop, step]. */
export type Range = [] | [number] | [number | null, number | null] | [number | null, number | null, number];

export declare function ready(): Promise<void>;

export declare class Group {
  readonly path: string;
  readonly type: 'Group';
  readonly links: Link[];
  readonly attrs: Record<string, Attribute>;
  keys(): string[];
  get(path: string): Promise<Group | Dataset | { type: 'Datatype'; path: string; attrs: Record<string, Attribute> } | null>;
}

export declare class Dataset {
  readonly path: string;
  readonly type: 'Dataset';
  readonly shape: number[] | null;
  readonly maxshape: (number | null)[];
  readonly dtype: string;
  readonly metadata: Metadata;
  readonly chunks: number[] | null;
  readonly filters: Filter[];
  readonly layout: string;
  readonly attrs: Record<string, Attribute>;
  slice(ranges: Range[]): Promise<Values>;
  readonly value: Promise<any>;
}

export declare class File extends Group {
  readonly filename: string;
  readonly stats: { bytesFetched: number; requests: number; rounds: number };
  close(): void;
}

export declare function open(source: Source, options?: OpenOptions): Promise<File>;

export interface Member {
  readonly id: string;
  readonly dataset: Dataset;
  readonly shape: number[];
  readonly dtype: string;
  read(roi?: Range[]): Promise<Values>;
}

export interface Annotation extends Member {
  labelmap(roi?: Range[]): Promise<{ shape: number[]; data: Uint16Array }>;
}

export declare class Sample {
  readonly file: File;
  readonly content_id: string | null;
  readonly attrs: Record<string, any>;
  readonly identity: Record<string, any>;
  readonly meta: any;
  readonly grids: string[];
  readonly images: Record<string, Member>;
  readonly annotations: Record<string, Annotation>;
  verify(): Promise<{ ok: boolean; checked: number; mismatched: string[]; content_id_ok: boolean | null; [k: string]: any }>;
  validate(): Promise<{ ok: boolean; diagnostics: { code: string; location: string; message: string }[]; [k: string]: any }>;
  computeContentId(): Promise<string>;
  close(): void;
}

export declare function openSample(source: Source, options?: OpenOptions): Promise<Sample>;

export interface DatasetSpec {
  name: string;
  data: ArrayBufferView | number[] | string[] | number | string | bigint;
  shape?: number[];
  dtype?: string;
  chunks?: number[];
  filters?: string | (string | number)[] | (string | number)[][];
}

export declare class FileWriter {
  constructor();
  createGroup(name: string): this;
  createDataset(spec: DatasetSpec): this;
  setAttribute(path: string, name: string, value: DatasetSpec['data'], opts?: { shape?: number[]; dtype?: string }): this;
  toBytes(): Uint8Array;
}
