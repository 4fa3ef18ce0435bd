import type { Knex } from 'knex';
import { MediaFileModel, VideoImportModel } from '../models/media';
import { UUID } from '../../lib/ids';

export type MediaFileRow = Pick<
  MediaFileModel,
  | 'id'
  | 'client_id'
  | 'kind'
  | 'bucket'
  | 'key'
  | 'size'
  | 'content_type'
  | 'detected_format'
  | 'original_filename'
  | 'corrected_filename'
  | 'format_corrected'
  | 'sha256'
  | 'created_at'
>;

export interface NewVideoImport {
  client_id: string;
  video_id: number;
  import_id: number | null;
  uuid: string;
  short_uuid: string | null;
  target_url: string;
  title: string | null;
  description: string | null;
  privacy: number;
}

/** Uploaded files and video imports, always within one client. */
export class MediaRepository {
  constructor(private readonly db: Knex) {}

  /** Records an upload; false when its key is already taken in the bucket (the caller picks another). */
  async insertFile(row: Omit<MediaFileRow, 'created_at'>): Promise<boolean> {
    await MediaFileModel.query(this.db).insert(row).onConflict(['bucket', 'key']).ignore();
    // Inserted, or ignored because another file holds the key: the row with the key says which.
    return (await this.keyOwner(row.bucket, row.key)) === row.id;
  }

  private async keyOwner(bucket: string, key: string): Promise<string | undefined> {
    return (await MediaFileModel.query(this.db).where({ bucket, key }).first().select('id'))?.id;
  }

  async deleteFile(clientId: string, id: string): Promise<void> {
    await MediaFileModel.query(this.db).modify('forClient', clientId).where('id', id).delete();
  }

  /** The client's file; another client's id (or a malformed one) is simply not there. */
  async getFile(clientId: string, id: string): Promise<MediaFileRow | undefined> {
    if (!UUID.test(id)) return undefined;
    return MediaFileModel.query(this.db).modify('forClient', clientId).findById(id);
  }

  async insertVideo(row: NewVideoImport): Promise<void> {
    await VideoImportModel.query(this.db).insert(row).onConflict(['client_id', 'video_id']).ignore();
  }

  async getVideo(clientId: string, videoId: number): Promise<VideoImportModel | undefined> {
    return VideoImportModel.query(this.db).modify('forClient', clientId).where('video_id', videoId).first();
  }
}
