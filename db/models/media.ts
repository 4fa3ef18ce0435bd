import { TenantModel } from './tenant';

/** An uploaded file (spec §4.8), the IDAP media resource `idap://media/{id}`. */
export class MediaFileModel extends TenantModel {
  static override tableName = 'media_files';

  id!: string;
  kind!: 'image' | 'file';
  bucket!: string;
  key!: string;
  /** bigint: pg returns it as a string. */
  size!: string | number;
  content_type!: string;
  detected_format!: string | null;
  original_filename!: string | null;
  corrected_filename!: string;
  format_corrected!: boolean;
  sha256!: string;
  created_at!: Date;
}

/** A video a client imported into PeerTube (spec §2.14); `video_id` is PeerTube's. */
export class VideoImportModel extends TenantModel {
  static override tableName = 'media_videos';

  id!: string;
  video_id!: string | number;
  import_id!: string | number | null;
  uuid!: string;
  short_uuid!: string | null;
  target_url!: string;
  title!: string | null;
  description!: string | null;
  privacy!: number;
  created_at!: Date;
}
